"""The durable outbox's rows: written with the change that must be shown, settled after sending."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict
from telesnap.services.lobby import LobbyService
from telesnap.services.outbox import OutboxService, record_boards
from telesnap.services.play import PlayService
from telesnap.services.store import GameStore
from telesnap.services.types import Actor, Refused
from telesnap.storage.models import BoardView, OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from .test_play_flow import ANN, BOB, CID, PLACE, flip_until_match, receipt

Sessions = async_sessionmaker[AsyncSession]


async def durable_game(sessions: Sessions) -> tuple[LobbyService, PlayService, OutboxService]:
    store = GameStore()
    record_boards(store)
    units = UnitsOfWork(sessions)
    lobby = LobbyService(units, store, shuffle_seed=3)
    play = PlayService(units, store)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.join(PLACE, CID, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    return lobby, play, OutboxService(units)


async def test_each_change_players_see_leaves_one_row_that_rebuilds_its_board(
    session_factory: Sessions,
) -> None:
    _, play, outbox = await durable_game(session_factory)
    table = (await play.table(PLACE)).table
    assert table.turn_player is not None
    turn = table.turn_player
    flipped = await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    entries = await outbox.pending_boards(PLACE.chat_id)
    assert len(entries) == 2, "the start and the flip"
    start, flip = entries
    assert start.id < flip.id
    assert flip.board == flipped, "the row rebuilds the very table and operations shown"
    assert flip.game_id == flipped.table.game_id
    assert (flip.chat_id, flip.thread_id) == (PLACE.chat_id, PLACE.thread_id)


async def test_a_call_that_waits_for_its_race_and_a_refused_press_write_no_row(
    session_factory: Sessions,
) -> None:
    _, play, outbox = await durable_game(session_factory)
    await flip_until_match(play)
    before = len(await outbox.pending_boards(PLACE.chat_id))
    called = await play.call(PLACE, BOB, CallKind.SNAP, receipt())
    assert called.verdict is CallVerdict.PENDING
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    with pytest.raises(Refused):  # a race is collecting
        await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    assert len(await outbox.pending_boards(PLACE.chat_id)) == before


async def test_a_sent_board_is_marked_with_its_message_in_one_go_and_a_failed_one_set_aside(
    session_factory: Sessions,
) -> None:
    _, play, outbox = await durable_game(session_factory)
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    start, flip = await outbox.pending_boards(PLACE.chat_id)
    await outbox.boards_failed([start.id], "BadRequest('refused')")
    table = flip.board.table
    await outbox.boards_sent([flip.id], table.game_id, table.board_version, 321)
    assert await outbox.pending_boards(PLACE.chat_id) == []
    async with session_factory() as session:
        rows = {row.id: row for row in await session.scalars(select(OutboxMessage))}
        views = list(await session.scalars(select(BoardView)))
    assert rows[start.id].state == "failed"
    assert rows[start.id].error == "BadRequest('refused')"
    assert rows[flip.id].state == "sent"
    assert rows[flip.id].message_id == 321
    assert [(v.game_id, v.version, v.message_id) for v in views] == [
        (table.game_id, table.board_version, 321)
    ]


async def test_a_chat_is_sent_by_one_owner_at_a_time_until_its_lease_lapses(
    session_factory: Sessions,
) -> None:
    now = [datetime(2026, 12, 1, 12, 0, tzinfo=UTC)]
    outbox = OutboxService(UnitsOfWork(session_factory), clock=lambda: now[0])
    lease = timedelta(seconds=10)
    assert await outbox.claim(-7, "worker-a", lease)
    assert not await outbox.claim(-7, "worker-b", lease)
    assert await outbox.claim(-7, "worker-a", lease), "the owner renews its lease"
    now[0] += timedelta(seconds=11)
    assert await outbox.claim(-7, "worker-b", lease), "a lapsed lease is taken over"
    assert not await outbox.claim(-7, "worker-a", lease)
    await outbox.release(-7, "worker-b")
    assert await outbox.claim(-7, "worker-a", lease), "a released chat is free at once"
