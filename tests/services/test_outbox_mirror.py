"""One process on SQLite sends what it committed without reading it back, never stale rows."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from types import SimpleNamespace

from sqlalchemy import delete, event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.leases import MemoryLeases
from telesnap.services.outbox.mirror import LineMirror
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.rows import OutboxEntry
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor
from telesnap.storage.models import OutboxMessage
from telesnap.storage.outbox_watch import OutboxWatch, note_added
from telesnap.storage.repositories import ShownBoard
from telesnap.storage.repositories.privacy import scrub
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from .sql_log import statements
from .test_outbox_rows import lobbies_shown
from .test_play_flow import ANN, BOB, PLACE, receipt

Sessions = async_sessionmaker[AsyncSession]
LEASES: dict[str, MemoryLeases] = {}
"""Each test's in-process leases, by the owner of its outbox service."""


async def one_process_game(
    sessions: Sessions, *, mirrored: bool = True
) -> tuple[PlayService, OutboxService, UnitsOfWork]:
    """A started game of Ann and Bob whose lobby was shown, sent by one process."""
    store = GameStore()
    units = UnitsOfWork(sessions)
    leases = MemoryLeases()
    watch = units.outbox_watch if mirrored else None
    outbox = OutboxService(units, leases=leases, watch=watch)
    LEASES[outbox.owner] = leases
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    await lobbies_shown(outbox)
    return PlayService(units, store), outbox, units


async def send_boards(outbox: OutboxService, message_id: int) -> None:
    entries = await outbox.pending(PLACE.chat_id)
    assert entries
    read = await outbox.pending_for_board(PLACE.chat_id, entries[0].game_id or 0)
    assert read is not None
    boards = [entry for entry in read[0] if isinstance(entry, OutboxEntry)]
    table = boards[-1].board.table
    ids = [entry.id for entry in boards]
    await outbox.boards_sent(PLACE.chat_id, ids, table.game_id, table.board_version, message_id)


async def flip(play: PlayService) -> None:
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())


async def test_a_board_just_committed_goes_out_without_reading_the_outbox(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await one_process_game(session_factory)
    await send_boards(outbox, 50)  # the start board: the chat's line is read once
    await flip(play)
    game_id = (await play.table(PLACE)).table.game_id
    engine = session_factory.kw["bind"]
    with statements(engine) as seen:
        read = await outbox.pending_for_board(PLACE.chat_id, game_id)
    assert seen == [], "the flip's row was handed over as it committed"
    assert read is not None
    mirrored, newest = read
    fresh = OutboxService(UnitsOfWork(session_factory), owner=outbox.owner, leases=MemoryLeases())
    reread = await fresh.pending_for_board(PLACE.chat_id, game_id)
    assert reread is not None
    stored = [entry for entry in reread[0] if entry.id in {e.id for e in mirrored}]
    assert mirrored == stored, "the same board as the database holds"
    assert newest is not None, "the start board is on screen"
    assert (newest.version, newest.message_id) == (0, 50)


async def test_a_row_another_unit_rewrote_is_read_again(session_factory: Sessions) -> None:
    # A privacy erasure rewrites names in pending rows, say: memory must not win.
    play, outbox, units = await one_process_game(session_factory)
    await send_boards(outbox, 50)
    await flip(play)
    (flipped,) = await outbox.pending(PLACE.chat_id) or []
    async with units() as uow:
        (row,) = await uow.outbox.pending(PLACE.chat_id)
        row.payload = scrub(row.payload, BOB.user_id, frozenset({"Bob"}), "a former player")
    entries = await outbox.pending(PLACE.chat_id)
    assert entries
    names = [p.name for e in entries if isinstance(e, OutboxEntry) for p in e.board.table.players]
    assert "Bob" not in names
    assert "a former player" in names
    assert [e.id for e in entries] == [flipped.id]


async def test_rows_deleted_by_another_unit_are_not_sent(session_factory: Sessions) -> None:
    play, outbox, units = await one_process_game(session_factory)
    await send_boards(outbox, 50)
    await flip(play)
    assert await outbox.pending(PLACE.chat_id)
    async with units() as uow:
        await uow.session.execute(
            delete(OutboxMessage).where(OutboxMessage.chat_id == PLACE.chat_id)
        )
    assert await outbox.pending(PLACE.chat_id) == []


async def test_a_board_settled_leaves_the_line_and_the_chat_is_let_go(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await one_process_game(session_factory)
    await send_boards(outbox, 50)
    await flip(play)
    await send_boards(outbox, 51)
    assert await outbox.pending(PLACE.chat_id) == [], "nothing left to send"
    leases = LEASES[outbox.owner]
    assert await leases.lease_of(None, PLACE.chat_id, outbox.owner, datetime.now(UTC)) is None


async def two_boards_waiting(
    sessions: Sessions,
) -> tuple[OutboxService, int, list[OutboxEntry]]:
    """A game whose start board was shown and whose next two boards wait, as read to send."""
    play, outbox, _ = await one_process_game(sessions)
    await send_boards(outbox, 50)
    await flip(play)
    await flip(play)
    game_id = (await play.table(PLACE)).table.game_id
    read = await outbox.pending_for_board(PLACE.chat_id, game_id)
    assert read is not None
    boards = [entry for entry in read[0] if isinstance(entry, OutboxEntry)]
    assert len(boards) == 2
    return outbox, game_id, boards


async def test_the_sent_mark_knows_from_the_line_whether_the_chat_has_more(
    session_factory: Sessions,
) -> None:
    outbox, game_id, (first, second) = await two_boards_waiting(session_factory)
    engine = session_factory.kw["bind"]
    board = first.board.table
    with statements(engine) as seen:
        more = await outbox.boards_sent(PLACE.chat_id, [first.id], game_id, board.board_version, 51)
    assert more, "the second flip's board still waits: the chat is kept"
    assert not [s for s in seen if s.startswith("SELECT")], "nothing is read back to know it"
    board = second.board.table
    assert not await outbox.boards_sent(
        PLACE.chat_id, [second.id], game_id, board.board_version, 52
    ), "nothing is left: the chat is let go"
    leases = LEASES[outbox.owner]
    assert await leases.lease_of(None, PLACE.chat_id, outbox.owner, datetime.now(UTC)) is None
    assert await outbox.pending(PLACE.chat_id) == []


async def test_boards_shown_together_are_marked_sent_in_one_commit(
    session_factory: Sessions,
) -> None:
    outbox, game_id, boards = await two_boards_waiting(session_factory)
    commits: list[object] = []
    engine = session_factory.kw["bind"]

    def committed(connection: object) -> None:
        commits.append(connection)

    event.listen(engine.sync_engine, "commit", committed)
    try:
        more = await asyncio.gather(
            *(
                outbox.boards_sent(
                    PLACE.chat_id, [board.id], game_id, board.board.table.board_version, 60 + n
                )
                for n, board in enumerate(boards)
            )
        )
    finally:
        event.remove(engine.sync_engine, "commit", committed)
    assert more == [False, False], "both are settled: nothing is left to send"
    assert len(commits) == 1, "one transaction for both"
    assert await outbox.pending(PLACE.chat_id) == []
    async with UnitOfWork(session_factory, read_only=True) as uow:
        newest = await uow.board_views.newest(game_id)
    assert newest is not None
    assert (newest.version, newest.message_id) == (boards[-1].board.table.board_version, 61)


async def test_one_process_reads_its_line_without_taking_the_write_lock(
    session_factory: Sessions,
) -> None:
    # SQLite serialises writers: a sender that took BEGIN IMMEDIATE to read its
    # boards would hold up every chat's presses for the read's duration.
    _, outbox, _ = await one_process_game(session_factory, mirrored=False)
    with statements(session_factory.kw["bind"]) as seen:
        entries = await outbox.pending(PLACE.chat_id)
    assert entries, "the start board is read"
    assert seen, "from the database"
    writes = [s for s in seen if s.upper().startswith(("BEGIN IMMEDIATE", "INSERT", "UPDATE"))]
    assert writes == [], "reading the line writes nothing and takes no write lock"
    assert await outbox.pending(-99) == [], "an idle chat is let go: it is free to read again"


def _rows_added(watch: OutboxWatch, *chat_ids: int) -> None:
    """Units commit one row to each of ``chat_ids`` (only the chat counts for the marks)."""
    for chat_id in chat_ids:
        session = SimpleNamespace(info={})  # a commit without a database
        note_added(session, OutboxMessage(chat_id=chat_id))  # type: ignore[arg-type]
        watch.committed(session)  # type: ignore[arg-type]


def test_the_mirror_keeps_its_newest_boards_and_chat_marks_only() -> None:
    mirror = LineMirror(OutboxWatch(), kept=2)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for game_id in (1, 2, 3):
        mirror.shown(ShownBoard(game_id, 1, 100 + game_id, at))
    assert mirror.newest_shown(1) == (False, None), "the oldest game is read again"
    assert mirror.newest_shown(3) == (True, ShownBoard(3, 1, 103, at))


def test_a_chat_whose_mark_was_forgotten_is_not_seeded_from_a_stale_read() -> None:
    """A row added between the mark and the seed is never missed, even once the mark is gone."""
    watch = OutboxWatch()
    mirror = LineMirror(watch, kept=2)
    mark = mirror.touched(1)  # taken before reading chat 1's line
    _rows_added(watch, 1)  # committed meanwhile: the read missed it
    _rows_added(watch, 2, 3)  # chat 1's mark is forgotten
    mirror.seed(1, mark, [], None, None)
    assert mirror.line(1, 0) is None, "the chat is read again, not known as empty"
    still = mirror.touched(1)
    mirror.seed(1, still, [], None, None)
    assert mirror.line(1, 0) == [], "a still chat is known again"
