"""The durable outbox's rows: written with the change that must be shown, settled after sending."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict, SnapCalled
from telesnap.services.outbox.leases import MemoryLeases, StoredLeases
from telesnap.services.outbox.record import record_boards, shows_a_board
from telesnap.services.outbox.rows import LobbyEntry, OutboxEntry
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Refused
from telesnap.storage.models import BoardView, OutboxMessage, OutboxSender
from telesnap.storage.uow import UnitsOfWork

from .test_play_flow import ANN, BOB, CID, PLACE, flip_until_match, receipt


async def pending_boards(outbox: OutboxService, chat_id: int) -> list[OutboxEntry] | None:
    """The chat's unsent boards, read as the sender reads its line (None: another sends)."""
    entries = await outbox.pending(chat_id)
    if entries is None:
        return None
    return [entry for entry in entries if isinstance(entry, OutboxEntry)]


Sessions = async_sessionmaker[AsyncSession]


async def durable_game(
    sessions: Sessions, *, lobbies_sent: bool = True
) -> tuple[LobbyService, PlayService, OutboxService]:
    store = GameStore()
    units = UnitsOfWork(sessions)
    outbox = OutboxService(units)
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    play = PlayService(units, store)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.join(PLACE, CID, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    if lobbies_sent:
        await lobbies_shown(outbox)
    return lobby, play, outbox


async def lobbies_shown(outbox: OutboxService) -> None:
    """Settle the lobby rows ahead of the boards (the lobby message was sent and edited)."""
    entries = await outbox.pending(PLACE.chat_id)
    assert entries is not None
    lobbies = [entry for entry in entries if isinstance(entry, LobbyEntry)]
    assert lobbies, "every lobby change wrote its row"
    ids = [entry.id for entry in lobbies]
    await outbox.line_sent(PLACE.chat_id, ids, 40, lobby_of=lobbies[0].game_id)


async def test_each_change_players_see_leaves_one_row_that_rebuilds_its_board(
    session_factory: Sessions,
) -> None:
    _, play, outbox = await durable_game(session_factory)
    table = (await play.table(PLACE)).table
    assert table.turn_player is not None
    turn = table.turn_player
    flipped = await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    entries = await pending_boards(outbox, PLACE.chat_id)
    assert entries is not None
    assert len(entries) == 2, "the start and the flip"
    start, flip = entries
    assert start.id < flip.id
    assert flip.board == flipped, "the row rebuilds the very table and operations shown"
    assert flip.game_id == flipped.table.game_id
    assert (flip.chat_id, flip.thread_id) == (PLACE.chat_id, PLACE.thread_id)


def test_only_a_wrong_call_is_shown_on_a_board_of_its_own() -> None:
    def call(verdict: CallVerdict) -> SnapCalled:
        return SnapCalled(0, CallKind.SNAP, 0, 0, 1, verdict)

    assert shows_a_board([call(CallVerdict.WRONG)])
    silent = (CallVerdict.PENDING, CallVerdict.TOO_SLOW, CallVerdict.TOO_LATE)
    assert not any(shows_a_board([call(verdict)]) for verdict in silent)
    assert not shows_a_board([])


async def test_a_call_that_waits_for_its_race_and_a_refused_press_write_no_row(
    session_factory: Sessions,
) -> None:
    _, play, outbox = await durable_game(session_factory)
    await flip_until_match(play)
    before = len(await pending_boards(outbox, PLACE.chat_id) or [])
    called = await play.call(PLACE, BOB, CallKind.SNAP, receipt())
    assert called.verdict is CallVerdict.PENDING
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    with pytest.raises(Refused):  # a race is collecting
        await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    assert len(await pending_boards(outbox, PLACE.chat_id) or []) == before


async def test_a_sent_board_is_marked_with_its_message_in_one_go_and_a_failed_one_set_aside(
    session_factory: Sessions,
) -> None:
    _, play, outbox = await durable_game(session_factory)
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    pending = await pending_boards(outbox, PLACE.chat_id)
    assert pending is not None
    start, flip = pending
    more = await outbox.rows_failed(PLACE.chat_id, [start.id], "BadRequest('refused')")
    assert more, "the flip's board is still to send"
    table = flip.board.table
    more = await outbox.boards_sent(
        PLACE.chat_id, [flip.id], table.game_id, table.board_version, 321
    )
    assert not more
    assert await pending_boards(outbox, PLACE.chat_id) == []
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


@pytest.mark.parametrize("kept", ["stored", "in memory"])
async def test_a_chat_is_sent_by_one_worker_at_a_time_until_its_lease_lapses(
    session_factory: Sessions, kept: str
) -> None:
    now = [datetime(2026, 12, 1, 12, 0, tzinfo=UTC)]
    units = UnitsOfWork(session_factory)
    lease = timedelta(seconds=10)
    # In memory: the same rules for the senders of one process (SQLite's).
    leases = StoredLeases() if kept == "stored" else MemoryLeases()
    a = OutboxService(units, clock=lambda: now[0], owner="worker-a", lease=lease, leases=leases)
    b = OutboxService(units, clock=lambda: now[0], owner="worker-b", lease=lease, leases=leases)

    async def claim(owner: str) -> bool:
        async with units() as uow:
            return await leases.claim(uow, -7, owner, now[0], now[0] + lease)

    assert await claim("worker-a")
    assert not await claim("worker-b")
    assert await pending_boards(b, -7) is None, "b may not read what a sends"
    assert await claim("worker-a"), "the owner renews its lease"
    now[0] += timedelta(seconds=11)
    assert await claim("worker-b"), "a lapsed lease is taken over"
    assert not await claim("worker-a")
    await b.release_all()
    assert await claim("worker-a"), "a chat given up is free at once"
    await a.release_all()
    assert await pending_boards(b, -7) == [], "a worker that stops gives its chats up"
    assert await claim("worker-a"), "and a chat with nothing to send is let go when read"


async def test_a_worker_that_settles_its_board_keeps_the_chat_only_while_it_has_more(
    session_factory: Sessions,
) -> None:
    _, play, a = await durable_game(session_factory)
    b = OutboxService(UnitsOfWork(session_factory), owner="worker-b")
    pending = await pending_boards(a, PLACE.chat_id)
    assert pending is not None
    (start,) = pending
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())  # made on worker b, say
    assert await pending_boards(b, PLACE.chat_id) is None, "a is sending the chat"
    table = start.board.table
    assert await a.boards_sent(PLACE.chat_id, [start.id], table.game_id, table.board_version, 5)
    rest = await pending_boards(a, PLACE.chat_id)
    assert rest is not None
    (flip,) = rest  # a sends b's board too
    table = flip.board.table
    assert not await a.boards_sent(PLACE.chat_id, [flip.id], table.game_id, table.board_version, 6)
    assert await pending_boards(b, PLACE.chat_id) == [], (
        "a let the chat go once it had nothing left"
    )


async def test_a_board_left_by_a_worker_that_died_before_sending_it_is_free_to_take_over(
    session_factory: Sessions,
) -> None:
    # The change was made on worker a, whose board then waited for its turn (the
    # chat's pace) when a was killed: a never read it (nor the lobby rows before it).
    await durable_game(session_factory, lobbies_sent=False)
    b = OutboxService(UnitsOfWork(session_factory), owner="worker-b")
    assert await b.chats_waiting() == [PLACE.chat_id], "no lease keeps the board from b"
    taken = await pending_boards(b, PLACE.chat_id)
    assert taken is not None, "b sends it now, not once a lease of a's lapses"
    assert [entry.board.table.board_version for entry in taken] == [0]


async def test_the_boards_of_a_chat_that_removed_the_bot_are_set_aside(
    session_factory: Sessions,
) -> None:
    _, _, outbox = await durable_game(session_factory)
    await outbox.chat_gone(PLACE.chat_id)
    assert await pending_boards(outbox, PLACE.chat_id) == []
    async with session_factory() as session:
        rows = list(
            await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == "board"))
        )
    assert [(row.state, row.error) for row in rows] == [("failed", "chat gone")]


async def test_one_process_sends_its_boards_without_writing_a_lease(
    session_factory: Sessions,
) -> None:
    store = GameStore()
    units = UnitsOfWork(session_factory)
    outbox = OutboxService(units, leases=MemoryLeases())
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    await lobbies_shown(outbox)
    pending = await pending_boards(outbox, PLACE.chat_id)
    assert pending is not None
    assert await outbox.chats_waiting() == [], "read to be sent: leased to this process"
    (start,) = pending
    table = start.board.table
    more = await outbox.boards_sent(
        PLACE.chat_id, [start.id], table.game_id, table.board_version, 9
    )
    assert not more, "nothing left: the chat is let go"
    async with session_factory() as session:
        assert list(await session.scalars(select(OutboxSender))) == [], "no lease row written"
        (row,) = await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == "board"))
    assert (row.state, row.message_id) == ("sent", 9)
