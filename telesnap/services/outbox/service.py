"""The durable outbox's send side: a chat's unsent rows read back in order, and settled.

Every row is written in the transaction of the change it shows. A chat's sender sends the
head of its line and settles the rows shown, with the message's record, in a group commit;
a row Telegram refuses for good is marked failed and the later rows go on. Delivery is at
least once: a crash between Telegram's answer and that commit shows the message again.
What was just written is not read back: with one writer (one process), committed rows are
handed over and a line is read once and kept, until the copy could be wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ...storage.models import OutboxMessage, OutboxState
from ...storage.outbox_watch import OutboxWatch
from ...storage.repositories import ShownBoard
from ...storage.uow import GroupCommit, UnitOfWork
from ...support.bounded import BoundedDict
from ..ports import UnitOfWorkFactory
from .bare_notes import BareNotes
from .rows import BOARD, UNREADABLE, BoardEntry, Entry, entry_of, read_rows

__all__ = ["LINES_KEPT", "Line", "OutboxService", "Shown", "ShownBoard"]

logger = logging.getLogger(__name__)

STOP_REACH = timedelta(minutes=10)
"""How long before the last board a removal may still have been waiting at a stop: a slot of
the pace, or a 429's wait, is seconds to a minute."""
LINES_KEPT = 4096
"""How many chats' lines, games' newest boards and lobby messages one process keeps."""


@dataclass(frozen=True, slots=True)
class Line:
    """A chat's unsent rows in ``id`` order, and the newest board shown of each of their games."""

    entries: list[Entry]
    shown: dict[int, ShownBoard] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Shown:
    """What one send showed: the rows it settles, and where.

    ``message_id`` None: settled without a message (their table is older than one on screen).
    """

    chat_id: int
    entry_ids: tuple[int, ...]
    message_id: int | None
    board: ShownBoard | None = None
    """A board: its game and version, shown in ``message_id`` at its moment; its row is
    the last of ``entry_ids`` (the rows before it are earlier boards of the same message)."""
    lobby_of: int | None = None
    """A lobby: the game whose lobby message ``message_id`` is from now on."""


class OutboxService:
    """Reads the chats' unsent rows, and settles what was sent or refused."""

    def __init__(
        self,
        units: UnitOfWorkFactory,
        clock: Callable[[], datetime] | None = None,
        *,
        watch: OutboxWatch | None = None,
        keep_lines: bool = False,
        together: GroupCommit | None = None,
    ) -> None:
        """Use ``units`` for every transaction; ``clock`` (wall time, UTC) lets tests move time.

        ``watch`` hands over the rows ``units`` commit; ``keep_lines``: this process is the one
        writer, so lines are kept; ``together``: the group commit the sent marks are written in.
        """
        self._units = units
        self._clock = clock or (lambda: datetime.now(UTC))
        self._watch = watch
        self._keeps = keep_lines and watch is not None
        self._rewrites = watch.rewrites if watch is not None else 0
        self._lines: BoundedDict[int, dict[int, Entry]] = BoundedDict(LINES_KEPT)
        self._loading: dict[int, dict[int, Entry]] = {}
        self._shown: BoundedDict[int, ShownBoard] = BoundedDict(LINES_KEPT)
        self._lobbies: BoundedDict[int, int] = BoundedDict(LINES_KEPT)
        self._taken: set[int] = set()
        """Chats whose games' newest boards are read again with their next line."""
        self._to_mark: list[Shown] = []
        """Sends shown whose mark is not committed yet: never shown again, marked next."""
        self._marking: list[Shown] = []
        """The marks of the transaction under way."""
        self._listeners: list[Callable[[int], None]] = []
        self._copy_listeners: list[Callable[[int, int], None]] = []
        self._together = together or GroupCommit(units)
        self._notes = BareNotes(self._together)
        if watch is not None:
            watch.listen(self._committed)

    def on_rows(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(chat_id)`` whenever a unit of this process commits rows for a chat."""
        self._listeners.append(listener)

    def on_shown_twice(self, listener: Callable[[int, int], None]) -> None:
        """Call ``listener(chat_id, message_id)`` for each board message here that is a copy.

        Another worker showed and marked the same rows (a mark held through a database failure
        while the chat changed hands): its buttons are to come off.
        """
        self._copy_listeners.append(listener)

    # -- reading ------------------------------------------------------------------------------

    async def line(self, chat_id: int) -> Line:
        """The chat's unsent rows, in order, without those shown whose mark is still to commit.

        A row that cannot be read back is marked failed and logged, never holding up the chat.
        """
        self._check_rewrites()
        known = self._lines.get(chat_id) if self._keeps else None
        if known is None:
            known = await self._read(chat_id)
        else:
            self._lines.touch(chat_id)
        unmarked = {
            entry_id for shown in (*self._to_mark, *self._marking) for entry_id in shown.entry_ids
        }
        entries = [entry for entry_id, entry in sorted(known.items()) if entry_id not in unmarked]
        games = {entry.game_id for entry in entries if isinstance(entry, BoardEntry)}
        shown = {game: self._shown[game] for game in games if game in self._shown}
        if games - set(shown):  # read with the line, unless kept since
            async with self._units(read_only=True) as uow:
                shown.update(await self._read_shown(uow, games - set(shown)))
        return Line(entries, shown)

    async def _read(self, chat_id: int) -> dict[int, Entry]:
        """The chat's line from the database (and its games' newest boards, in one transaction)."""
        self._loading[chat_id] = {}
        rewrites = self._rewrites
        try:
            async with self._units(read_only=True) as uow:
                rows = await uow.outbox.pending(chat_id)
                entries, unreadable = read_rows(rows)
                games = {entry.game_id for entry in entries if isinstance(entry, BoardEntry)}
                if chat_id not in self._taken:
                    games -= set(self._shown)
                elif games:  # another worker may have shown them since: read them again
                    self._taken.discard(chat_id)
                await self._read_shown(uow, games)
            if unreadable:
                await self._set_aside(chat_id, unreadable, "unreadable")
            line = {entry.id: entry for entry in entries}
            line.update(self._loading[chat_id])  # committed while it was read
        finally:
            del self._loading[chat_id]
        if self._keeps and not unreadable and rewrites == self._rewrites:
            self._lines[chat_id] = line
        return line

    async def _read_shown(self, uow: UnitOfWork, games: set[int]) -> dict[int, ShownBoard]:
        """The newest board shown of each of ``games`` that has one, as stored (and kept)."""
        shown = {}
        for game_id in sorted(games):
            newest = await uow.outbox.newest_board(game_id)
            if newest is not None:
                shown[game_id] = self._shown[game_id] = newest
        return shown

    async def lobby_message(self, game_id: int) -> int | None:
        """The game's lobby message, to edit (None: not posted yet)."""
        if self._keeps and game_id in self._lobbies:
            return self._lobbies[game_id]
        async with self._units(read_only=True) as uow:
            game = await uow.games.get(game_id, lock=False)
        message_id = game.lobby_message_id if game is not None else None
        if message_id is not None:
            self._lobbies[game_id] = message_id
        return message_id

    async def has_pending(self, chat_id: int) -> bool:
        """Whether the chat has a row still to send, as the database says."""
        async with self._units(read_only=True) as uow:
            return await uow.outbox.has_pending(chat_id)

    async def waiting(self, older_than: timedelta = timedelta(0)) -> list[int]:
        """Chats with a row unsent for longer than ``older_than``, as the database says."""
        async with self._units(read_only=True) as uow:
            return await uow.outbox.chats_waiting(self._clock() - older_than)

    async def boards_a_stop_may_have_left_live(self) -> list[tuple[int, int]]:
        """The chat and message of each board whose buttons a stop may have left on.

        A board's buttons come off in the chat's next slot after the board that replaced it,
        from memory: a kill, or a drain out of time, can leave the board before a game's newest
        live. Games whose newest board came within :data:`STOP_REACH` of the last are looked at.
        """
        async with self._units(read_only=True) as uow:
            return await uow.outbox.boards_before_newest(STOP_REACH)

    async def sends_within(self, within: timedelta) -> dict[int, list[timedelta]]:
        """How long ago each chat's messages went, ``within`` now, as far as the rows say.

        A board counts twice: it took the buttons off the board before it, a send of its own.
        """
        now = self._clock()
        async with self._units(read_only=True) as uow:
            sent = await uow.outbox.sent_since(now - within)
        sends: dict[int, list[timedelta]] = {}
        for chat_id, kind, at in sent:
            sends.setdefault(chat_id, []).extend([now - at] * (2 if kind == BOARD else 1))
        return sends

    def forget(self, chat_id: int) -> None:
        """Read the chat's line from the database next time (it is the truth)."""
        self._lines.pop(chat_id, None)

    def taken(self, chat_id: int) -> None:
        """The chat's lease was just taken here: another worker may have shown its boards.

        Until it lets the chat go, only this worker shows them, so what it reads now stays right.
        """
        if not self._keeps:
            self._taken.add(chat_id)

    async def boards_shown(self, game_id: int, limit: int) -> list[BoardEntry]:
        """The game's last ``limit`` boards marked sent, oldest first (unreadable rows left out)."""
        async with self._units(read_only=True) as uow:
            rows = await uow.outbox.sent_of_game(game_id, BOARD, limit)
        entries = []
        for row in rows:
            try:
                entry = entry_of(row)
            except UNREADABLE:
                continue
            if isinstance(entry, BoardEntry):
                entries.append(entry)
        return entries

    # -- settling -----------------------------------------------------------------------------

    async def sent(self, shown: Shown) -> None:
        """Mark the rows sent, with the board's or the lobby's message, in the next group commit.

        A mark that fails (database down) is logged and kept: its rows are never shown again by
        this process, and it is written with the next.
        """
        self._forget_rows(shown.chat_id, shown.entry_ids)
        if shown.board is not None:
            self._note_shown(shown.board)
        if shown.lobby_of is not None and shown.message_id is not None:
            self._lobbies[shown.lobby_of] = shown.message_id
        self._to_mark.append(shown)
        try:
            await self._together.write(self._write_marks)
        except Exception:
            self._to_mark[:0], self._marking = self._marking, []
            self._together.ride_along(self._write_marks)  # this chat may never send here again
            logger.exception(
                "chat %s: could not mark rows %s sent (message %s); marked with the next",
                shown.chat_id,
                list(shown.entry_ids),
                shown.message_id,
            )

    async def bared(self, chat_id: int, message_id: int) -> None:
        """Note that a message's buttons come off, before they do (see :mod:`.bare_notes`)."""
        await self._notes.note(chat_id, message_id)

    async def not_bared(self, chat_id: int, message_id: int) -> None:
        """A message's buttons did not come off after all (see :mod:`.bare_notes`)."""
        await self._notes.withdraw(chat_id, message_id)

    async def write(self) -> None:
        """Write the marks and notes no commit has taken along yet (at a stop, say)."""
        if self._to_mark or self._marking:
            await self._together.write(self._write_marks)
        await self._notes.write()

    async def _write_marks(self, uow: UnitOfWork) -> None:
        """Write every mark waiting, including an earlier attempt's that did not commit."""
        self._marking += self._to_mark
        self._to_mark = []
        marks = self._marking
        uow.after_commit(marks.clear)
        marked = await uow.outbox.mark_sent(
            {entry_id: mark.message_id for mark in marks for entry_id in mark.entry_ids},
            self._clock(),
            views={
                mark.entry_ids[-1]: mark.board.shown_at
                for mark in marks
                if mark.board is not None and mark.entry_ids
            },
        )
        copies = [
            copy
            for mark in marks
            if not marked.issuperset(mark.entry_ids)  # the usual case reads nothing more
            for copy in await self._stale_copies(uow, mark)
        ]
        if copies:
            uow.after_commit(lambda: self._report_copies(copies))
        for mark in marks:
            if mark.lobby_of is not None and mark.message_id is not None:
                await _store_lobby_message(uow, mark.lobby_of, mark.message_id)

    async def _stale_copies(self, uow: UnitOfWork, mark: Shown) -> list[tuple[int, int]]:
        """The messages showing ``mark``'s rows that are not their game's newest board.

        Rows of a mark another worker marked first were shown twice (a mark held through a
        database failure while the chat changed hands): of the two messages, the one that is not
        the newest board keeps live buttons no worker takes off. Rows set aside mean no copy.
        """
        if mark.board is None or mark.message_id is None:
            return []
        elsewhere = await uow.outbox.messages_showing(mark.entry_ids) - {mark.message_id}
        if not elsewhere:
            return []
        newest = await uow.outbox.newest_board(mark.board.game_id)
        if newest is not None:
            self._shown[mark.board.game_id] = newest
        live = newest.message_id if newest is not None else None
        return [(mark.chat_id, m) for m in sorted({mark.message_id, *elsewhere}) if m != live]

    def _report_copies(self, copies: Sequence[tuple[int, int]]) -> None:
        for chat_id, message_id in copies:
            if self._notes.took_off(chat_id, message_id):
                continue  # a newer board here took them off already
            logger.warning(
                "chat %s: message %s showed rows another message shows too (a sent mark"
                " written late) and is not the newest board: its buttons come off",
                chat_id,
                message_id,
            )
            for listener in self._copy_listeners:
                listener(chat_id, message_id)

    async def failed(
        self, chat_id: int, entry_ids: Sequence[int], error: str, *, game_id: int | None = None
    ) -> None:
        """Mark rows failed for good (Telegram refused them): the chat's later rows go on.

        ``game_id``: the rows' game, named in the log with the chat.
        """
        self._forget_rows(chat_id, entry_ids)
        await self._set_aside(chat_id, entry_ids, error, game_id)

    async def chat_gone(self, chat_id: int) -> None:
        """The bot was removed from the chat: its unsent rows are set aside."""
        async with self._units() as uow:
            rows = await uow.outbox.pending(chat_id)
            await uow.outbox.settle(
                [row.id for row in rows], OutboxState.FAILED, self._clock(), error="chat gone"
            )
        self._lines.pop(chat_id, None)

    async def _set_aside(
        self, chat_id: int, entry_ids: Sequence[int], error: str, game_id: int | None = None
    ) -> None:
        async with self._units() as uow:
            await uow.outbox.settle(entry_ids, OutboxState.FAILED, self._clock(), error=error[:200])
        of_game = "" if game_id is None else f" of game {game_id}"
        logger.warning(
            "chat %s: outbox rows %s%s set aside (%s)", chat_id, list(entry_ids), of_game, error
        )

    async def forget_settled(self, older_than: timedelta) -> int:
        """Delete rows settled longer than ``older_than`` ago; how many were deleted."""
        async with self._units() as uow:
            return await uow.outbox.forget_settled(self._clock() - older_than)

    # -- the kept lines -----------------------------------------------------------------------

    def _committed(self, rows: Sequence[OutboxMessage]) -> None:
        chats: dict[int, None] = {}
        for row in rows:
            chats[row.chat_id] = None
            kept = [
                line
                for line in (self._lines.get(row.chat_id), self._loading.get(row.chat_id))
                if line is not None
            ]
            if not kept:
                continue
            try:
                entry = entry_of(row)
            except UNREADABLE:
                self._lines.pop(row.chat_id, None)  # the database read sets it aside, and logs it
                continue
            for line in kept:
                line[entry.id] = entry
        for chat_id in chats:
            for listener in self._listeners:
                listener(chat_id)

    def _forget_rows(self, chat_id: int, entry_ids: Sequence[int]) -> None:
        line = self._lines.get(chat_id)
        if line is not None:
            for entry_id in entry_ids:
                line.pop(entry_id, None)

    def _note_shown(self, board: ShownBoard) -> None:
        """``board`` is on screen: the newest of its game, unless a newer one is known."""
        known = self._shown.get(board.game_id)
        if known is None or (known.version, known.message_id) <= (board.version, board.message_id):
            self._shown[board.game_id] = board

    def _check_rewrites(self) -> None:
        if self._watch is not None and self._watch.rewrites != self._rewrites:
            self._rewrites = self._watch.rewrites
            self._lines.clear()
            self._shown.clear()
            self._lobbies.clear()


async def _store_lobby_message(uow: UnitOfWork, game_id: int, message_id: int) -> None:
    game = await uow.games.get(game_id, lock=False)
    if game is not None:
        game.lobby_message_id = message_id
