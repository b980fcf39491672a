"""The durable outbox: rows written with their change, read back in order, settled after sending."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict, SnapCalled
from telesnap.services.outbox.record import record_boards, shows_a_board
from telesnap.services.outbox.rows import (
    BoardEntry,
    Entry,
    LobbyEntry,
    Notice,
    NoticeEntry,
    NoticeKind,
    next_head,
)
from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Refused
from telesnap.services.views import LobbyView, PlayOutcome
from telesnap.storage.models import OutboxMessage
from telesnap.storage.repositories import ShownBoard
from telesnap.storage.repositories.privacy import scrub
from telesnap.storage.uow import GroupCommit, UnitOfWork, UnitsOfWork

from .sql_log import commits, statements
from .test_play_flow import ANN, BOB, CID, PLACE, flip_until_match, receipt

Sessions = async_sessionmaker[AsyncSession]
AT = datetime(2026, 12, 1, tzinfo=UTC)


async def durable_game(
    sessions: Sessions, *, keep_lines: bool = True, lobbies_sent: bool = True
) -> tuple[PlayService, OutboxService, UnitsOfWork]:
    """A started game of Ann, Bob and Cid, its lobby shown, in a process that keeps its lines."""
    store = GameStore()
    units = UnitsOfWork(sessions)
    outbox = OutboxService(units, watch=units.outbox_watch, keep_lines=keep_lines)
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.join(PLACE, CID, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    if lobbies_sent:
        lobbies = [e for e in (await outbox.line(PLACE.chat_id)).entries if _is_lobby(e)]
        assert lobbies, "every lobby change wrote its row"
        ids = tuple(entry.id for entry in lobbies)
        await outbox.sent(Shown(PLACE.chat_id, ids, 40, lobby_of=lobbies[0].game_id))
    return PlayService(units, store), outbox, units


def _is_lobby(entry: Entry) -> bool:
    return isinstance(entry, LobbyEntry)


async def boards(outbox: OutboxService) -> list[BoardEntry]:
    """The chat's unsent boards, as its sender reads its line."""
    entries = (await outbox.line(PLACE.chat_id)).entries
    return [entry for entry in entries if isinstance(entry, BoardEntry)]


async def flip(play: PlayService) -> PlayOutcome:
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    return await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())


def shown(entries: list[BoardEntry], message_id: int) -> Shown:
    """The mark of ``entries`` shown in one message, as the sender makes it."""
    table = entries[-1].board.table
    board = ShownBoard(table.game_id, table.board_version, message_id, AT)
    return Shown(PLACE.chat_id, tuple(entry.id for entry in entries), message_id, board=board)


async def test_each_change_players_see_leaves_one_row_that_rebuilds_its_board(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await durable_game(session_factory)
    flipped = await flip(play)
    start, flip_row = await boards(outbox)
    assert start.id < flip_row.id
    assert flip_row.board == flipped, "the row rebuilds the very table and operations shown"
    assert flip_row.game_id == flipped.table.game_id
    assert (flip_row.chat_id, flip_row.thread_id) == (PLACE.chat_id, PLACE.thread_id)


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
    play, outbox, _ = await durable_game(session_factory)
    await flip_until_match(play)
    before = len(await boards(outbox))
    called = await play.call(PLACE, BOB, CallKind.SNAP, receipt())
    assert called.verdict is CallVerdict.PENDING
    with pytest.raises(Refused):  # a race is collecting
        await flip(play)
    assert len(await boards(outbox)) == before


async def test_a_sent_board_is_marked_with_its_message_in_one_go_and_a_failed_one_set_aside(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await durable_game(session_factory)
    await flip(play)
    start, flip_row = await boards(outbox)
    await outbox.failed(PLACE.chat_id, [start.id], "BadRequest('refused')")
    await outbox.sent(shown([flip_row], 321))
    assert await boards(outbox) == []
    async with session_factory() as session:
        rows = {row.id: row for row in await session.scalars(select(OutboxMessage))}
    assert (rows[start.id].state, rows[start.id].error) == ("failed", "BadRequest('refused')")
    assert (rows[flip_row.id].state, rows[flip_row.id].message_id) == ("sent", 321)
    assert rows[flip_row.id].shown_at == AT, "the board's view, in the same mark"
    assert rows[start.id].shown_at is None


async def test_a_board_just_committed_is_taken_without_reading_the_outbox(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await durable_game(session_factory)
    await outbox.sent(shown(await boards(outbox), 50))  # the start board: the line was read
    await flip(play)
    engine = session_factory.kw["bind"]
    with statements(engine) as seen:
        line = await outbox.line(PLACE.chat_id)
    assert seen == [], "the flip's row was handed over as it committed"
    fresh = OutboxService(UnitsOfWork(session_factory))
    assert line == await fresh.line(PLACE.chat_id), "the same line as the database holds"
    newest = line.shown[line.entries[0].game_id or 0]
    assert (newest.version, newest.message_id) == (0, 50), "the start board is on screen"


async def test_a_row_another_unit_rewrote_is_read_again(session_factory: Sessions) -> None:
    # A privacy erasure rewrites names in pending rows, say: memory must not win.
    play, outbox, units = await durable_game(session_factory)
    await outbox.sent(shown(await boards(outbox), 50))
    await flip(play)
    (flipped,) = await boards(outbox)
    async with units() as uow:
        (row,) = await uow.outbox.pending(PLACE.chat_id)
        row.payload = scrub(row.payload, BOB.user_id, frozenset({"Bob"}), "a former player")
    (entry,) = await boards(outbox)
    names = [player.name for player in entry.board.table.players]
    assert "Bob" not in names
    assert "a former player" in names
    assert entry.id == flipped.id


async def test_rows_deleted_by_another_unit_are_not_sent(session_factory: Sessions) -> None:
    play, outbox, units = await durable_game(session_factory)
    await flip(play)
    assert await boards(outbox)
    async with units() as uow:
        await uow.session.execute(
            delete(OutboxMessage).where(OutboxMessage.chat_id == PLACE.chat_id)
        )
    assert (await outbox.line(PLACE.chat_id)).entries == []


async def test_boards_shown_together_are_marked_sent_in_one_commit(
    session_factory: Sessions,
) -> None:
    play, outbox, _ = await durable_game(session_factory)
    await outbox.sent(shown(await boards(outbox), 50))
    await flip(play)
    await flip(play)
    waiting = await boards(outbox)
    with commits(session_factory.kw["bind"]) as seen:
        await asyncio.gather(*(outbox.sent(shown([e], 60 + n)) for n, e in enumerate(waiting)))
    assert len(seen) == 1, "one transaction for both"
    assert await boards(outbox) == []
    async with UnitOfWork(session_factory, read_only=True) as uow:
        newest = await uow.outbox.newest_board(waiting[-1].game_id)
    assert newest is not None
    assert (newest.version, newest.message_id) == (waiting[-1].board.table.board_version, 61)


async def test_a_line_is_read_without_taking_the_write_lock(session_factory: Sessions) -> None:
    # SQLite serialises writers: a sender that took BEGIN IMMEDIATE to read its rows
    # would hold up every chat's presses for the read's duration.
    _, outbox, _ = await durable_game(session_factory, keep_lines=False)
    with statements(session_factory.kw["bind"]) as seen:
        line = await outbox.line(PLACE.chat_id)
    assert line.entries, "the start board is read"
    assert seen, "from the database"
    writes = [s for s in seen if s.upper().startswith(("BEGIN IMMEDIATE", "INSERT", "UPDATE"))]
    assert writes == [], "reading the line writes nothing and takes no write lock"


async def test_a_mark_that_fails_is_logged_never_shown_again_and_written_with_the_next(
    session_factory: Sessions, caplog: pytest.LogCaptureFixture
) -> None:
    play, _, units = await durable_game(session_factory)
    failing = _FailingWrites(units)  # the database goes away for the mark
    outbox = OutboxService(units, together=GroupCommit(failing))
    (start,) = await boards(outbox)
    with caplog.at_level(logging.ERROR):
        await outbox.sent(shown([start], 42))
    assert f"could not mark rows [{start.id}] sent (message 42)" in caplog.text
    assert str(PLACE.chat_id) in caplog.text
    await flip(play)
    waiting = await boards(outbox)
    assert start.id not in [entry.id for entry in waiting], "it is not shown again"
    failing.fail = False
    await outbox.sent(shown(waiting, 43))
    async with session_factory() as session:
        states = [row.state for row in await session.scalars(select(OutboxMessage))]
    assert set(states) == {"sent"}, "the failed mark was written with the next"


class _FailingWrites:
    """Units of work whose writes fail while ``fail`` is set (reads still work)."""

    def __init__(self, units: UnitsOfWork) -> None:
        self._units = units
        self.fail = True

    def __call__(self, *, read_only: bool = False) -> UnitOfWork:
        if self.fail and not read_only:
            raise ConnectionError("database unreachable")
        return self._units(read_only=read_only)


async def test_the_rows_of_a_chat_that_removed_the_bot_are_set_aside(
    session_factory: Sessions,
) -> None:
    _, outbox, _ = await durable_game(session_factory)
    await outbox.chat_gone(PLACE.chat_id)
    assert await boards(outbox) == []
    async with session_factory() as session:
        rows = list(
            await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == "board"))
        )
    assert [(row.state, row.error) for row in rows] == [("failed", "chat gone")]


async def test_rows_nobody_sent_for_a_while_are_found_waiting(session_factory: Sessions) -> None:
    # The change was made on a worker that was killed while its rows waited for their
    # turn: any worker finds them, once they are older than the grace.
    await durable_game(session_factory, lobbies_sent=False)
    other = OutboxService(UnitsOfWork(session_factory))
    assert await other.waiting(timedelta(minutes=1)) == [], "younger than the grace"
    assert await other.waiting() == [PLACE.chat_id]
    assert [type(e).__name__ for e in (await other.line(PLACE.chat_id)).entries][-1] == (
        "BoardEntry"
    )


# -- what goes next ------------------------------------------------------------------------

CHAT = -100
NO_BOARD = cast(PlayOutcome, None)  # the heads read ids, topics and games only


def board(row_id: int, thread_id: int, game_id: int) -> BoardEntry:
    return BoardEntry(row_id, CHAT, thread_id, game_id, NO_BOARD)


def reminder(row_id: int, thread_id: int, game_id: int) -> NoticeEntry:
    notice = Notice(NoticeKind.TURN_REMINDER, cast(dict[str, Any], {}))
    return NoticeEntry(row_id, CHAT, thread_id, game_id, notice, None)


def lobby(row_id: int, thread_id: int, game_id: int) -> LobbyEntry:
    return LobbyEntry(row_id, CHAT, thread_id, game_id, LobbyView(game_id, 1, (), "lobby"))


def ids(entries: list[Entry]) -> list[int]:
    return [entry.id for entry in entries]


def test_a_games_waiting_boards_go_together_but_never_past_its_topics_notice() -> None:
    rows: list[Entry] = [board(1, 5, 7), board(2, 9, 8), board(3, 5, 7), reminder(4, 5, 7)]
    rows += [board(5, 5, 7)]
    assert ids(next_head(rows)) == [1, 3], "the boards before the reminder, past topic 9's"
    assert ids(next_head(rows[1:])) == [2], "then topic 9's board, the oldest left"


def test_each_topic_takes_its_turn_as_its_rows_were_written() -> None:
    rows: list[Entry] = [reminder(1, 5, 7), board(2, 9, 8), lobby(3, 5, 7), lobby(4, 5, 7)]
    order = []
    while rows:
        head = next_head(rows)
        order.append(ids(head))
        rows = [entry for entry in rows if entry not in head]
    assert order == [[1], [2], [3, 4]], "a notice alone; a game's lobby rows together"


@dataclass
class TwoWorkers:
    """A game whose chat two workers send, A's marks failing until ``database_back``."""

    play: PlayService
    worker_a: OutboxService
    worker_b: OutboxService
    failing: _FailingWrites
    together: GroupCommit
    copies: list[tuple[int, int]] = field(default_factory=list)
    """The messages reported as copies, by the worker ``listen`` was given."""

    @staticmethod
    async def playing(sessions: Sessions) -> TwoWorkers:
        play, _, units = await durable_game(sessions)
        failing = _FailingWrites(units)
        together = GroupCommit(failing)
        return TwoWorkers(
            play, OutboxService(units, together=together), OutboxService(units), failing, together
        )

    def listen(self, worker: OutboxService) -> None:
        worker.on_shown_twice(lambda chat, message: self.copies.append((chat, message)))

    async def shows_the_board(self, worker: OutboxService, message_id: int) -> BoardEntry:
        """``worker`` shows the chat's one unsent board in ``message_id``; the board."""
        (board,) = await boards(worker)
        await worker.sent(shown([board], message_id))
        return board

    async def database_back(self) -> None:
        """The database answers again: A's held mark rides the next shared transaction."""
        self.failing.fail = False
        await self.together.write(_no_write)


async def _no_write(_: UnitOfWork) -> None:
    """A write of nothing: the next shared transaction."""


async def test_a_board_shown_twice_across_a_failed_mark_keeps_buttons_only_on_the_recorded_one(
    session_factory: Sessions,
) -> None:
    """A's mark fails (the database went away) and B, which took the chat meanwhile, shows the
    same rows again: when A's mark is written at last, A's copy is reported, to lose its buttons.
    """
    two = await TwoWorkers.playing(session_factory)
    two.listen(two.worker_a)
    start = await two.shows_the_board(two.worker_a, 42)
    await two.shows_the_board(two.worker_b, 43)
    await two.database_back()
    assert two.copies == [(PLACE.chat_id, 42)]
    async with session_factory() as session:
        row = await session.get(OutboxMessage, start.id)
    assert row is not None
    assert (row.state, row.message_id) == ("sent", 43), "B's message is the board of record"


async def test_a_board_shown_again_after_another_workers_mark_is_reported_as_a_copy(
    session_factory: Sessions,
) -> None:
    """A's late mark lands before B's: B's message is the copy, and B bares A's next."""
    two = await TwoWorkers.playing(session_factory)
    two.listen(two.worker_b)
    start = await two.shows_the_board(two.worker_a, 42)
    (again,) = await boards(two.worker_b)
    await two.database_back()
    await two.worker_b.sent(shown([again], 43))
    assert two.copies == [(PLACE.chat_id, 43)]
    await flip(two.play)
    line = await two.worker_b.line(PLACE.chat_id)
    assert line.shown[start.game_id].message_id == 42, "the next board bares A's message"


async def test_a_board_shown_again_with_a_newer_one_bares_the_older_message(
    session_factory: Sessions,
) -> None:
    """B merged A's board with the next one: B's message is the newest, A's loses its buttons."""
    two = await TwoWorkers.playing(session_factory)
    two.listen(two.worker_b)
    await two.shows_the_board(two.worker_a, 42)
    await flip(two.play)
    merged = await boards(two.worker_b)
    assert len(merged) == 2
    await two.database_back()
    await two.worker_b.sent(shown(merged, 43))
    assert two.copies == [(PLACE.chat_id, 42)]


async def test_a_late_mark_of_rows_set_aside_reports_no_copy(session_factory: Sessions) -> None:
    """The bot was removed from the chat meanwhile: its rows are failed, not shown twice."""
    two = await TwoWorkers.playing(session_factory)
    two.listen(two.worker_a)
    await two.shows_the_board(two.worker_a, 42)
    await two.worker_b.chat_gone(PLACE.chat_id)
    await two.database_back()
    assert two.copies == []


async def test_a_start_learns_which_chats_sent_within_the_last_window(
    session_factory: Sessions,
) -> None:
    """What a cold start counts in the pace: what a stopped process sent lately, and where; a
    board twice (it took the buttons off the board before it)."""
    _, outbox, units = await durable_game(session_factory)  # its lobby was sent just now
    await outbox.sent(shown(await boards(outbox), 41))
    window = timedelta(seconds=61)
    recent = await outbox.sends_within(window)
    assert list(recent) == [PLACE.chat_id]
    assert len(recent[PLACE.chat_id]) == 3, "the lobby, and the board twice"
    assert all(timedelta(0) <= ago < window for ago in recent[PLACE.chat_id])
    later = OutboxService(units, clock=lambda: datetime.now(UTC) + timedelta(minutes=2))
    assert await later.sends_within(window) == {}


async def test_a_copy_whose_buttons_came_off_here_already_is_not_bared_again(
    session_factory: Sessions,
) -> None:
    """Telegram refuses taking buttons off twice ("message is not modified")."""
    two = await TwoWorkers.playing(session_factory)
    two.listen(two.worker_a)
    await two.shows_the_board(two.worker_a, 42)
    await two.shows_the_board(two.worker_b, 43)
    two.failing.fail = False
    await two.worker_a.bared(PLACE.chat_id, 42)  # a newer board of A's replaced it meanwhile
    await two.database_back()
    assert two.copies == []
