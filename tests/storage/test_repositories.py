"""Every repository function, on SQLite and on PostgreSQL (see tests/conftest.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import (
    CallKind,
    CallResult,
    CallVerdict,
    CardFlipped,
    RaceResolved,
    SnapCalled,
    operation_to_json,
    parse_card,
)
from telesnap.storage.errors import ActiveGameExistsError, PlayerAlreadySeatedError
from telesnap.storage.models import Game, GameStatus
from telesnap.storage.repositories import OperationRecord
from telesnap.storage.uow import UnitOfWork

from ..inbox_marks import is_processed

Factory = async_sessionmaker[AsyncSession]
CHAT = -1001234567890123
BIG_USER = 7_000_000_001  # Telegram ids exceed 32 bits


async def seed_chat_and_users(factory: Factory, *user_ids: int) -> None:
    async with UnitOfWork(factory) as uow:
        await uow.chats.upsert(CHAT, "supergroup", "Snap club", is_forum=True)
        for user_id in user_ids:
            await uow.users.upsert(user_id, f"User {user_id}")


async def open_game(factory: Factory, creator: int = 1, thread_id: int = 0) -> int:
    async with UnitOfWork(factory) as uow:
        game = await uow.games.add(CHAT, thread_id, creator_id=creator, settings={"tie_ms": 100})
        return game.id


async def test_upsert_user_inserts_then_updates_names(session_factory: Factory) -> None:
    async with UnitOfWork(session_factory) as uow:
        user = await uow.users.upsert(BIG_USER, "Ada", "Lovelace", "ada", "en")
        assert (user.id, user.first_name, user.username) == (BIG_USER, "Ada", "ada")
        first_update = user.updated_at
    async with UnitOfWork(session_factory) as uow:
        user = await uow.users.upsert(BIG_USER, "Augusta", None, None, "mk")
        assert (user.first_name, user.last_name, user.username) == ("Augusta", None, None)
        assert user.language_code == "mk"
        assert user.updated_at >= first_update
    async with UnitOfWork(session_factory) as uow:
        stored = await uow.users.get(BIG_USER)
        assert stored is not None
        assert stored.first_name == "Augusta"
        assert await uow.users.get(42) is None


async def test_upsert_chat_keeps_the_latest_title(session_factory: Factory) -> None:
    async with UnitOfWork(session_factory) as uow:
        await uow.chats.upsert(CHAT, "group", "Old")
    async with UnitOfWork(session_factory) as uow:
        chat = await uow.chats.upsert(CHAT, "supergroup", "New", is_forum=True)
        assert (chat.type, chat.title, chat.is_forum) == ("supergroup", "New", True)
    async with UnitOfWork(session_factory) as uow:
        stored = await uow.chats.get(CHAT)
        assert stored is not None
        assert stored.title == "New"
        assert await uow.chats.get(1) is None


async def test_chat_settings_per_chat_and_per_topic(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory)
    async with UnitOfWork(session_factory) as uow:
        assert await uow.settings.get_values(CHAT) == {}
        await uow.settings.save_values(CHAT, 0, {"tie_window_ms": 150, "match": "rank"})
        await uow.settings.save_values(CHAT, 7, {"tie_window_ms": 0})
    async with UnitOfWork(session_factory) as uow:
        assert await uow.settings.get_values(CHAT, 0) == {"tie_window_ms": 150, "match": "rank"}
        assert await uow.settings.get_values(CHAT, 7) == {"tie_window_ms": 0}
        effective = await uow.settings.get_effective_values(CHAT, 7)
        assert effective == {"tie_window_ms": 0, "match": "rank"}
        await uow.settings.save_values(CHAT, 0, {"match": "colour"})
        assert await uow.settings.get_values(CHAT, 0) == {"match": "colour"}


async def test_add_and_find_the_active_game(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1)
    game_id = await open_game(session_factory, thread_id=5)
    async with UnitOfWork(session_factory) as uow:
        game = await uow.games.find_active(CHAT, 5)
        assert game is not None
        assert game.id == game_id
        assert game.status == GameStatus.LOBBY
        assert game.settings == {"tie_ms": 100}
        assert game.is_active
        assert await uow.games.find_active(CHAT, 0) is None
        assert await uow.games.find_active(CHAT, 5, lock=False) is game
        same = await uow.games.get(game_id)
        assert same is game
        assert await uow.games.get(game_id + 1000) is None


async def test_one_active_game_per_chat_topic(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1, 2)
    first = await open_game(session_factory)
    with pytest.raises(ActiveGameExistsError):
        await open_game(session_factory, creator=2)
    other_topic = await open_game(session_factory, creator=2, thread_id=9)
    assert other_topic != first
    async with UnitOfWork(session_factory) as uow:
        game = await uow.games.get(first)
        assert game is not None
        game.status = GameStatus.RUNNING
    with pytest.raises(ActiveGameExistsError):
        await open_game(session_factory, creator=2)
    async with UnitOfWork(session_factory) as uow:
        game = await uow.games.get(first)
        assert game is not None
        game.status = GameStatus.FINISHED
    assert await open_game(session_factory, creator=2) not in (first, other_topic)


async def test_the_database_itself_refuses_a_second_active_game(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1)
    await open_game(session_factory)

    async def insert_directly() -> None:
        async with UnitOfWork(session_factory) as uow:
            uow.session.add(Game(chat_id=CHAT, thread_id=0, creator_id=1, status="running"))
            await uow.flush()

    with pytest.raises(IntegrityError):
        await insert_directly()


async def test_the_unit_of_work_survives_a_refused_game(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1, 2)
    await open_game(session_factory)
    async with UnitOfWork(session_factory) as uow:
        with pytest.raises(ActiveGameExistsError):
            await uow.games.add(CHAT, 0, creator_id=2)
        await uow.users.upsert(2, "Still works")
    async with UnitOfWork(session_factory) as uow:
        user = await uow.users.get(2)
        assert user is not None
        assert user.first_name == "Still works"


async def test_players_are_listed_in_seat_order(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1, 2, 3, BIG_USER)
    game_id = await open_game(session_factory)
    async with UnitOfWork(session_factory) as uow:
        for user_id in (3, 1, BIG_USER):
            await uow.games.add_player(game_id, user_id)
        with pytest.raises(PlayerAlreadySeatedError):
            await uow.games.add_player(game_id, 1)
    async with UnitOfWork(session_factory) as uow:
        players = await uow.games.list_players(game_id)
        assert [(p.seat, p.user_id) for p in players] == [(0, 3), (1, 1), (2, BIG_USER)]
        assert await uow.games.count_players(game_id) == 3
        assert players[0].afk_streak == 0
        assert players[0].left_at is None
        assert players[0].joined_at.tzinfo is UTC
        player = await uow.games.get_player(game_id, 1)
        assert player is not None
        assert player.seat == 1
        assert await uow.games.get_player(game_id, 2) is None


async def test_remove_player_then_join_again_at_the_end(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1, 2, 3)
    game_id = await open_game(session_factory)
    async with UnitOfWork(session_factory) as uow:
        for user_id in (1, 2, 3):
            await uow.games.add_player(game_id, user_id)
    async with UnitOfWork(session_factory) as uow:
        assert await uow.games.remove_player(game_id, 2)
        assert not await uow.games.remove_player(game_id, 2)
        await uow.games.add_player(game_id, 2)
    async with UnitOfWork(session_factory) as uow:
        players = await uow.games.list_players(game_id)
        assert [p.user_id for p in players] == [1, 3, 2]


async def test_list_running_games(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1)
    lobby = await open_game(session_factory, thread_id=1)
    running = [await open_game(session_factory, thread_id=t) for t in (2, 3)]
    async with UnitOfWork(session_factory) as uow:
        for game_id in running:
            game = await uow.games.get(game_id)
            assert game is not None
            game.status = GameStatus.RUNNING
    async with UnitOfWork(session_factory) as uow:
        assert [game.id for game in await uow.games.list_running()] == running
        assert lobby not in running


async def test_operations_get_consecutive_seq_and_load_in_order(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1)
    game_id = await open_game(session_factory)
    receipt = datetime(2025, 6, 1, 9, 0, 0, 654321, tzinfo=UTC)
    flipped = CardFlipped(seat=0, card=parse_card("10♥"), turned_over=False)
    called = SnapCalled(1, CallKind.SNAP, 9, 4, 3, CallVerdict.PENDING)
    call = OperationRecord(
        called,
        user_id=BIG_USER,
        update_id=900_000_000_123,
        receipt_wall_at=receipt,
        receipt_stamp_ns=123_456_789_012_345,
        receipt_host_id="host-a",
        reaction_ms=412,
    )
    resolved = RaceResolved(
        CallKind.SNAP,
        (1,),
        (0, 3),
        pot_taken=False,
        cards=3,
        results=(CallResult(1, CallVerdict.WON),),
    )
    async with UnitOfWork(session_factory) as uow:
        rows = await uow.history.append(game_id, [OperationRecord(flipped), call])
        assert rows == [1, 2]
    async with UnitOfWork(session_factory) as uow:
        more = await uow.history.append(game_id, [OperationRecord(resolved)])
        assert more == [3]
        assert await uow.history.append(game_id, []) == []
        assert await uow.history.last_seq(game_id) == 3
    async with UnitOfWork(session_factory) as uow:
        loaded = await uow.history.load(game_id)
        assert [(op.seq, op.kind) for op in loaded] == [
            (1, "card_flipped"),
            (2, "snap_called"),
            (3, "race_resolved"),
        ]
        assert [op.payload for op in loaded[:2]] == [
            operation_to_json(flipped),
            operation_to_json(called),
        ]
        stored_call = loaded[1]
        assert (stored_call.user_id, stored_call.update_id, stored_call.reaction_ms) == (
            BIG_USER,
            900_000_000_123,
            412,
        )
        assert stored_call.receipt_wall_at == receipt
        assert stored_call.receipt_stamp_ns == 123_456_789_012_345
        assert stored_call.receipt_host_id == "host-a"
        assert loaded[0].user_id is None
        assert loaded[0].recorded_at.tzinfo is UTC
        read = await uow.history.operations(game_id)
        assert [op.recorded_at for op in read] == [row.recorded_at for row in loaded]
        assert [replace(op, recorded_at=None) for op in read] == [
            OperationRecord(flipped),
            call,
            OperationRecord(resolved),
        ]
        assert [op.seq for op in await uow.history.load(game_id, after_seq=2)] == [3]
        later = await uow.history.operations(game_id, after_seq=2)
        assert [op.operation for op in later] == [resolved]
        assert await uow.history.last_seq(game_id + 1) == 0


async def test_mark_update_processed_is_idempotent(session_factory: Factory) -> None:
    async with UnitOfWork(session_factory) as uow:
        assert not await is_processed(uow.session, 10)
        assert await uow.updates.mark_update_processed(10)
        assert not await uow.updates.mark_update_processed(10)
    async with UnitOfWork(session_factory) as uow:
        assert not await uow.updates.mark_update_processed(10)
        assert await uow.updates.mark_update_processed(2**40)
        assert await is_processed(uow.session, 10)


async def test_a_rolled_back_update_counts_as_unprocessed(session_factory: Factory) -> None:

    async def fail_after_marking() -> None:
        async with UnitOfWork(session_factory) as uow:
            assert await uow.updates.mark_update_processed(11)
            raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError, match="handler failed"):
        await fail_after_marking()
    async with UnitOfWork(session_factory) as uow:
        assert await uow.updates.mark_update_processed(11)


async def test_forget_old_processed_updates(session_factory: Factory) -> None:
    async with UnitOfWork(session_factory) as uow:
        await uow.updates.mark_update_processed(1)
    async with UnitOfWork(session_factory) as uow:
        later = datetime.now(UTC) + timedelta(seconds=1)
        assert await uow.updates.forget_before(later) == 1
        assert await uow.updates.mark_update_processed(1)


async def test_timers_due_fired_and_cancelled(session_factory: Factory) -> None:
    await seed_chat_and_users(session_factory, 1)
    game_id = await open_game(session_factory)
    now = datetime(2025, 1, 1, 12, tzinfo=UTC)
    async with UnitOfWork(session_factory) as uow:
        assert await uow.timers.next_due_at() is None
        late = await uow.timers.add("turn", now + timedelta(seconds=30), CHAT, 0, game_id)
        soon = await uow.timers.add("lobby", now - timedelta(seconds=1), CHAT, payload={"x": 1})
        later = await uow.timers.add("turn", now + timedelta(hours=1), CHAT, 0, game_id)
    async with UnitOfWork(session_factory) as uow:
        assert await uow.timers.next_due_at() == soon.due_at
        due = await uow.timers.due(now + timedelta(seconds=30))
        assert [timer.id for timer in due] == [soon.id, late.id]
        assert due[0].payload == {"x": 1}
        assert await uow.timers.mark_fired(soon.id, now)
        assert not await uow.timers.mark_fired(soon.id, now)
    async with UnitOfWork(session_factory) as uow:
        assert [timer.id for timer in await uow.timers.due(now + timedelta(seconds=30))] == [
            late.id
        ]
        assert await uow.timers.cancel_for_game(game_id, kind="lobby") == 0
        assert await uow.timers.cancel_for_game(game_id) == 2
        assert await uow.timers.due(now + timedelta(days=1)) == []
        assert later.id not in {t.id for t in await uow.timers.due(now + timedelta(days=1))}


async def test_the_unit_of_work_rolls_back_on_error(session_factory: Factory) -> None:

    async def fail_after_writing() -> None:
        async with UnitOfWork(session_factory) as uow:
            await uow.users.upsert(5, "Gone")
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await fail_after_writing()
    async with UnitOfWork(session_factory) as uow:
        assert await uow.users.get(5) is None


async def test_the_session_is_only_there_inside_the_block(session_factory: Factory) -> None:
    uow = UnitOfWork(session_factory)
    with pytest.raises(RuntimeError, match="not open"):
        _ = uow.session
