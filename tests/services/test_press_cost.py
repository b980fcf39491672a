"""What showing a press costs the database: the sender's read and sent mark, as workers make them.

A Flip's change (the processed mark, the game, its history, its outbox row) is
the same on every backend; what differs between one process and several
workers is how a chat's rows are read to be sent and marked sent. These tests
count the statements and commits of each step, and check that the step still
keeps a chat to one sender at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.services.outbox.leases import StoredLeases
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.rows import OutboxEntry
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Reason, Refused
from telesnap.storage.database import is_sqlite
from telesnap.storage.liveness import PostgresLiveness
from telesnap.storage.models import OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from .sql_log import commits, kinds, statements
from .test_outbox_mirror import one_process_game
from .test_outbox_rows import lobbies_shown
from .test_play_flow import ANN, BOB, PLACE, receipt

Sessions = async_sessionmaker[AsyncSession]
OTHER = Place(chat_id=-200, chat_type="group", title="Snap club two")


@asynccontextmanager
async def alive(sessions: Sessions, owner: str) -> AsyncIterator[OutboxService]:
    """A worker's outbox on PostgreSQL, alive (it holds its owner lock), as app.py wires it."""
    outbox = OutboxService(
        UnitsOfWork(sessions), owner=owner, leases=StoredLeases(live_owners=True)
    )
    liveness = PostgresLiveness(sessions.kw["bind"], owner)
    await liveness.start()
    await liveness.joined()
    try:
        yield outbox
    finally:
        await liveness.close()


@pytest.fixture
async def worker(session_factory: Sessions) -> AsyncIterator[OutboxService]:
    """Worker a (PostgreSQL only: SQLite's one process keeps its leases in memory)."""
    engine: AsyncEngine = session_factory.kw["bind"]
    if is_sqlite(engine):
        pytest.skip("one process on SQLite: its leases are kept in memory")
    async with alive(session_factory, "worker-a") as outbox:
        yield outbox


async def workers_game(sessions: Sessions, outbox: OutboxService, place: Place) -> PlayService:
    """A started game of Ann and Bob in ``place`` (a store shared with other workers)."""
    store = GameStore(shared=True)
    units = UnitsOfWork(sessions)
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    await lobby.open(place, ANN, receipt())
    await lobby.join(place, BOB, receipt())
    await lobby.start(place, ANN, is_admin=False, receipt=receipt())
    if place == PLACE:
        await lobbies_shown(outbox)
    else:
        entries = await outbox.pending(place.chat_id) or []
        lobbies = [entry.id for entry in entries if not isinstance(entry, OutboxEntry)]
        await outbox.line_sent(place.chat_id, lobbies, 40, lobby_of=entries[0].game_id)
    return PlayService(units, store)


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


async def boards_of(outbox: OutboxService, place: Place) -> list[OutboxEntry]:
    entries = await outbox.pending(place.chat_id)
    assert entries is not None, "this worker sends the chat"
    return [entry for entry in entries if isinstance(entry, OutboxEntry)]


async def mark(outbox: OutboxService, place: Place, board: OutboxEntry, message_id: int) -> bool:
    table = board.board.table
    return await outbox.boards_sent(
        place.chat_id, [board.id], table.game_id, table.board_version, message_id
    )


async def test_a_worker_reads_a_chat_it_let_go_under_a_new_lease_in_one_transaction(
    session_factory: Sessions, worker: OutboxService
) -> None:
    play = await workers_game(session_factory, worker, PLACE)
    (start,) = await boards_of(worker, PLACE)
    assert not await mark(worker, PLACE, start, 50), "nothing left: the chat is let go"
    await flip(play, PLACE)
    game_id = start.game_id
    engine = session_factory.kw["bind"]
    with statements(engine) as seen, commits(engine) as committed:
        read = await worker.pending_for_board(PLACE.chat_id, game_id)
    assert read is not None
    assert kinds(seen) == [
        "INSERT outbox_senders",  # the lease, taken and answered in one statement
        "SELECT outbox_messages",
        "SELECT board_views",
    ], "it knows it let the chat go: no look at the lease before taking it"
    assert len(committed) == 1
    async with alive(session_factory, "worker-b") as b:
        assert await b.pending(PLACE.chat_id) is None, "a holds the chat: b sends none of it"


async def test_a_worker_marks_the_boards_of_its_chats_shown_meanwhile_in_one_commit(
    session_factory: Sessions, worker: OutboxService
) -> None:
    play = await workers_game(session_factory, worker, PLACE)
    await workers_game(session_factory, worker, OTHER)
    (start,) = await boards_of(worker, PLACE)
    (other_start,) = await boards_of(worker, OTHER)
    await flip(play, PLACE)  # the first chat has a board more to send after its start board
    engine = session_factory.kw["bind"]
    with statements(engine) as seen, commits(engine) as committed:
        more = await asyncio.gather(
            mark(worker, PLACE, start, 61), mark(worker, OTHER, other_start, 62)
        )
    assert more == [True, False], "the first chat is kept (a board waits), the other let go"
    assert len(committed) == 1, "one transaction for both chats"
    assert kinds(seen) == [
        "UPDATE outbox_messages",
        "INSERT board_views",
        "SELECT outbox_senders",  # both chats' locks, in one order
        "UPDATE outbox_senders",  # kept or let go, both at once
    ]
    async with session_factory() as session:
        shown = {
            row.id: row.message_id
            for row in await session.execute(select(OutboxMessage.id, OutboxMessage.message_id))
        }
    assert (shown[start.id], shown[other_start.id]) == (61, 62), "each row, its own message"
    async with alive(session_factory, "worker-b") as b:
        assert await b.pending(PLACE.chat_id) is None, "a still sends the chat with a board left"
        assert await b.pending(OTHER.chat_id) == [], "the chat let go is free to take at once"


async def test_the_rows_of_boards_shown_together_are_marked_sent_in_one_statement(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await one_process_game(session_factory)
    (start,) = await boards_of(outbox, PLACE)
    await mark(outbox, PLACE, start, 50)
    await flip(play, PLACE)
    await flip(play, PLACE)
    first, second = await boards_of(outbox, PLACE)
    engine = session_factory.kw["bind"]
    with statements(engine) as seen:
        await asyncio.gather(mark(outbox, PLACE, first, 51), mark(outbox, PLACE, second, 52))
    assert kinds(seen).count("UPDATE outbox_messages") == 1, "one statement for both rows"
    async with session_factory() as session:
        shown = {
            row.id: row.message_id
            for row in await session.execute(select(OutboxMessage.id, OutboxMessage.message_id))
        }
    assert (shown[first.id], shown[second.id]) == (51, 52), "each row, its own message"
    assert await outbox.pending(PLACE.chat_id) == []


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
        assert len(seen) == 5, "BEGIN, the processed mark, history, the game row, the board"


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
    assert row.history_length == len(stored), "the row counts every stored operation"
    assert row.board_version == (await play.table(PLACE)).table.board_version
