"""What a press costs the database: its change, and showing it (the line read, the sent mark).

A Flip's change (the processed mark, the game, its history, its outbox row) is
the same on every backend; showing it differs between one process (its lines
kept) and several workers (the line read back). These tests count the
statements and commits of each step.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import Game
from telesnap.services.inbox import InboxService, StoredUpdate
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Reason, Refused, Topic
from telesnap.storage.database import is_sqlite
from telesnap.storage.models import InboxUpdate, OutboxMessage
from telesnap.storage.uow import GroupCommit, UnitsOfWork

from .sql_log import commits, kinds, statements
from .test_outbox_rows import boards, durable_game, shown
from .test_play_flow import ANN, BOB, CID, PLACE, receipt

Sessions = async_sessionmaker[AsyncSession]


async def flip(play: PlayService, place: Place) -> None:
    turn = (await play.table(place)).table.turn_player
    assert turn is not None
    await play.flip(place, Actor(turn.user_id, turn.name), receipt())


async def one_process_flipped(units: UnitsOfWork) -> PlayService:
    """Ann and Bob's game on one process (its rows kept), flipped once."""
    store = GameStore(shared=False)
    lobby = LobbyService(units, store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    play = PlayService(units, store)
    await flip(play, PLACE)
    return play


async def test_a_worker_reads_a_chats_line_in_one_read_only_transaction(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await durable_game(session_factory, keep_lines=False)
    await outbox.sent(shown(await boards(outbox), 50))
    await flip(play, PLACE)
    engine = session_factory.kw["bind"]
    with statements(engine) as seen, commits(engine) as committed:
        line = await outbox.line(PLACE.chat_id)
    assert len(line.entries) == 1
    assert [kind for kind in kinds(seen) if not kind.startswith("BEGIN")] == [
        "SELECT outbox_messages"
    ], "the rows only: the game's newest board is the one this worker showed (and marked)"
    assert len(committed) == 1
    outbox.taken(PLACE.chat_id)  # the chat let go and taken again: another may have shown it
    with statements(engine) as seen, commits(engine) as committed:
        assert await outbox.line(PLACE.chat_id) == line
    assert [kind for kind in kinds(seen) if not kind.startswith("BEGIN")] == [
        "SELECT outbox_messages",
        "SELECT outbox_messages",
    ], "the rows and the game's newest board shown, in one transaction"
    assert len(committed) == 1


async def test_the_boards_of_several_chats_shown_meanwhile_are_marked_in_one_commit(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await durable_game(session_factory)
    await outbox.sent(shown(await boards(outbox), 50))
    await flip(play, PLACE)
    await flip(play, PLACE)
    first, second = await boards(outbox)
    engine = session_factory.kw["bind"]
    with statements(engine) as seen, commits(engine) as committed:
        await asyncio.gather(outbox.sent(shown([first], 51)), outbox.sent(shown([second], 52)))
    assert len(committed) == 1, "one transaction for both"
    assert [kind for kind in kinds(seen) if not kind.startswith("BEGIN")] == [
        "UPDATE outbox_messages",  # both rows, each with its message and view, in one statement
    ]
    async with session_factory() as session:
        marked = {
            row.id: row.message_id
            for row in await session.execute(select(OutboxMessage.id, OutboxMessage.message_id))
        }
    assert (marked[first.id], marked[second.id]) == (51, 52), "each row, its own message"
    assert await boards(outbox) == []


async def test_one_process_flips_on_the_game_row_its_last_change_left_without_reading_it(
    session_factory: Sessions,
) -> None:
    engine = session_factory.kw["bind"]
    shared = not is_sqlite(engine)
    store = GameStore(shared=shared)  # as coordination.py sets it: trusted on one process
    units = UnitsOfWork(session_factory)
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    play = PlayService(units, store)
    await flip(play, PLACE)  # the row is read once
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    with statements(engine) as seen:
        await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    read = "SELECT games" in kinds(seen)
    if shared:
        assert read, "workers lock the row: another may have changed the game"
    else:
        assert not read, "one process: the row is the one its last change wrote"
        assert len(seen) == 4, "BEGIN, the processed mark, history, the board: no game row"


async def test_the_players_names_are_read_in_one_statement(session_factory: Sessions) -> None:
    """A lobby shown after a join, and a game rebuilt from its history (a restart, another
    worker's change), read every seat's name at once, not one statement per player."""
    units = UnitsOfWork(session_factory)
    engine = session_factory.kw["bind"]
    lobby = LobbyService(units, GameStore(), shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    with statements(engine) as seen:
        await lobby.join(PLACE, CID, receipt())
    assert kinds(seen).count("SELECT users") <= 1, "the lobby's names"
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    restarted = PlayService(units, GameStore())  # nothing cached: the game is rebuilt
    with statements(engine) as seen:
        await flip(restarted, PLACE)
    assert kinds(seen).count("SELECT users") == 1, "three seats, one read"
    assert (await restarted.table(PLACE)).table.players[2].name == "Cid"


async def test_a_game_row_written_elsewhere_is_read_again_before_the_next_flip(
    session_factory: Sessions,
) -> None:
    units = UnitsOfWork(session_factory)
    play = await one_process_flipped(units)
    game_id = (await play.table(PLACE)).table.game_id
    async with units() as uow:  # another unit ends the game (an erasure, a timer...)
        row = await uow.games.get(game_id)
        assert row is not None
        row.status = "abandoned"
    with pytest.raises(Refused) as refused:
        await flip(play, PLACE)
    assert refused.value.reason is Reason.NO_GAME, "the game as stored: over"


async def test_a_refused_press_leaves_the_next_flip_on_the_stored_game(
    session_factory: Sessions,
) -> None:
    units = UnitsOfWork(session_factory)
    play = await one_process_flipped(units)
    table = (await play.table(PLACE)).table
    turn = table.turn_player
    assert turn is not None
    waiting = BOB if turn.user_id == ANN.user_id else ANN
    with pytest.raises(Refused) as refused:
        await play.flip(PLACE, waiting, receipt())
    assert refused.value.reason is Reason.NOT_YOUR_TURN
    await flip(play, PLACE)
    async with units() as uow:
        row = await uow.games.get(table.game_id)
        assert row is not None
        stored = await uow.history.operations(row.id)
    replayed = Game.replay(op.operation for op in stored)
    assert replayed.board_version == (await play.table(PLACE)).table.board_version


async def test_updates_received_a_sent_mark_and_a_handled_press_share_one_commit(
    session_factory: Sessions,
) -> None:
    play, _, units = await durable_game(session_factory)
    together = GroupCommit(units)
    outbox = OutboxService(units, together=together)
    inbox = InboxService(units, together)
    press = StoredUpdate(7001, PLACE.chat_id, 0, False, {"update_id": 7001}, 1, "host")
    await inbox.store([press])
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt(update_id=7001))
    (start, flipped) = await boards(outbox)
    following = StoredUpdate(7003, PLACE.chat_id, 0, False, {"update_id": 7003}, 2, "host")
    engine = session_factory.kw["bind"]
    with commits(engine) as committed:
        intaken, *_ = await asyncio.gather(
            inbox.store([following]),
            outbox.sent(shown([start, flipped], 60)),
            inbox.handled(7001),
        )
    assert len(committed) == 1, "the update stored, the mark and the dropped content"
    async with session_factory() as session:
        payload = await session.scalar(
            select(InboxUpdate.payload).where(InboxUpdate.update_id == 7001)
        )
    assert payload is None, "the press's content went"
    assert await boards(outbox) == []
    assert intaken.new == {7003}
    assert await inbox.next_in_topic(Topic(PLACE.chat_id, 0), 5) == [following], "stored"


async def test_handling_a_press_its_change_marked_takes_no_transaction_of_its_own(
    session_factory: Sessions,
) -> None:
    """Its change's commit marked the press processed: the handlers' end only drops its content,
    in the group commit of the drops (one transaction, where it took two)."""
    opened: list[AsyncSession] = []

    def sessions() -> AsyncSession:
        opened.append(session_factory())
        return opened[-1]

    play, _, units = await durable_game(sessions)  # type: ignore[arg-type]
    inbox = InboxService(units)
    press = StoredUpdate(7002, PLACE.chat_id, 0, False, {"update_id": 7002}, 1, "host")
    await inbox.store([press])
    await flip_as(play, 7002)
    engine = session_factory.kw["bind"]
    opened.clear()
    with statements(engine) as seen:
        await inbox.handled(7002)
    assert len(opened) == 1, "one session: the drop's"
    assert [kind for kind in kinds(seen) if not kind.startswith("BEGIN")] == ["UPDATE inbox"]


async def flip_as(play: PlayService, update_id: int) -> None:
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt(update_id=update_id))
