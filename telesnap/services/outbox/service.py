"""The durable outbox's send side: unsent rows read back in order, leased, settled.

Every row is written in the transaction of the change it shows (boards:
:mod:`.record`; lobbies and notices: :mod:`.rows`), and sent afterwards, per
chat in ``id`` order (:meth:`OutboxService.pending`). After Telegram accepts a
board, its rows are marked sent together with the record of the message that
shows the board (:meth:`OutboxService.boards_sent`, one transaction); a lobby
is settled with its message id (:meth:`OutboxService.line_sent`); a row
Telegram refuses for good is marked failed and the chat's later rows go on.
Delivery is at least once: a crash between Telegram's answer and that commit
shows the board again after the restart.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ...game import SnapError
from ...storage.models import OutboxState
from ...storage.outbox_watch import OutboxWatch
from ...storage.repositories import ShownBoard
from ...storage.uow import UnitOfWork
from ...support.batched import Batched
from ..ports import UnitOfWorkFactory
from .leases import MemoryLeases, SenderLeases, StoredLeases
from .mirror import LineMirror
from .rows import BOARD, Entry, OutboxEntry, entry_of, read_rows

logger = logging.getLogger(__name__)

T = TypeVar("T")


def worker_name() -> str:
    """A name for this process among the workers: host, process id and a random part."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


DEFAULT_LEASE = timedelta(seconds=30)
"""How long a worker sends a chat's boards after it last read them, unless it gives them up.

Longer than any one send may take (so a slow send is never repeated by another
worker), short enough that a dead worker's chats are taken over soon.
"""


async def _newest_shown(uow: UnitOfWork, game_id: int | None) -> ShownBoard | None:
    return None if game_id is None else await uow.board_views.newest(game_id)


@dataclass(frozen=True, slots=True)
class _ShownMark:
    """A board that reached the chat, and the rows it showed."""

    chat_id: int
    entry_ids: tuple[int, ...]
    shown: ShownBoard


class OutboxService:
    """Reads the unsent rows, settles sent and failed ones, leases chats and keeps their pace.

    One worker at a time sends a chat's boards: reading them when a board's turn
    to be sent has come leases the chat to ``owner`` (for ``lease``; a read with
    more than half of it left changes nothing), and the lease is given up when
    the chat has nothing left to send, so whichever worker's board comes next
    takes it. While another worker holds it, its boards are that worker's to
    send: it sees them when it settles its own. A board still waiting for its
    turn holds no lease, so the boards of a worker that dies while they wait are
    taken over as soon as they are older than the resender's grace.
    """

    def __init__(
        self,
        units: UnitOfWorkFactory,
        clock: Callable[[], datetime] | None = None,
        *,
        owner: str | None = None,
        lease: timedelta = DEFAULT_LEASE,
        leases: SenderLeases | None = None,
        watch: OutboxWatch | None = None,
    ) -> None:
        """Use ``units`` for every transaction; ``clock`` (wall time, UTC) lets tests move time.

        ``owner`` names this worker (by default :func:`worker_name`); ``leases``
        keeps the chats' leases (by default in the database, for many workers).
        ``watch`` (with leases in memory: this process is the outbox's one writer)
        hands over the rows ``units`` commit, so a chat's line is known without
        reading it back (:mod:`.outbox_mirror`).
        """
        self._units = units
        self._clock = clock or (lambda: datetime.now(UTC))
        self.owner = owner or worker_name()
        self._lease = lease
        self._leases = leases or StoredLeases()
        self._mirror: LineMirror | None = None
        self._memory: MemoryLeases | None = None
        if watch is not None and isinstance(self._leases, MemoryLeases):
            self._mirror, self._memory = LineMirror(watch), self._leases
        self._held: dict[int, datetime] = {}
        """Until when this worker took each chat it has not let go since (stored leases):
        a chat not in it is read under a new lease at once, without looking first."""
        # The boards shown meanwhile are marked in one commit (group commit); the chats'
        # locks are taken in one order (see :meth:`SenderLeases.keep_if_pending`).
        self._together = Batched(self._marks_shown)

    async def pending(self, chat_id: int, after_id: int = 0) -> list[Entry] | None:
        """The chat's unsent rows above ``after_id``, read back, in their order (the line).

        None: another worker sends the chat's rows now. A row that cannot be read
        back (of an unknown kind, or written by a newer version) is marked failed
        and logged, so it never holds up the chat's later rows.
        """
        read = await self._read_line(chat_id, after_id, None)
        return None if read is None else read[0]

    async def pending_for_board(
        self, chat_id: int, game_id: int, after_id: int = 0
    ) -> tuple[list[Entry], ShownBoard | None] | None:
        """:meth:`pending`, and the newest board of ``game_id`` shown so far (if any).

        Read together, so a board about to go out can tell whether a newer one of
        its game is on screen already (it must never show an older table).
        """
        return await self._read_line(chat_id, after_id, game_id)

    async def _read_line(
        self, chat_id: int, after_id: int, shown_of: int | None
    ) -> tuple[list[Entry], ShownBoard | None] | None:
        now = self._clock()
        if not self._leases.stored:
            return await self._read_line_in_process(chat_id, after_id, shown_of, now)
        held_until = self._held.get(chat_id)
        if held_until is not None and held_until - now > self._lease / 2:
            async with self._units(read_only=True) as uow:
                lease_until = await self._leases.lease_of(uow, chat_id, self.owner, now)
                if lease_until is not None and lease_until - now > self._lease / 2:
                    # Held (read a moment ago, for this send): reading again changes nothing.
                    rows = await uow.outbox.pending(chat_id, after_id)
                    entries, unreadable = await read_rows(uow, chat_id, rows)
                    if not unreadable:
                        return entries, await _newest_shown(uow, shown_of)
        async with self._units() as uow:
            until = now + self._lease
            if not await self._leases.claim(uow, chat_id, self.owner, now, until):
                self._held.pop(chat_id, None)
                return None
            self._held[chat_id] = until
            rows = await uow.outbox.pending(chat_id, after_id)
            entries, unreadable = await read_rows(uow, chat_id, rows)
            await uow.outbox.settle(
                unreadable, OutboxState.FAILED, self._clock(), error="unreadable"
            )
            if not entries and not await uow.outbox.has_pending(chat_id):
                await self._let_go(uow, chat_id)  # nothing to send
            return entries, await _newest_shown(uow, shown_of)

    async def _read_line_in_process(
        self, chat_id: int, after_id: int, shown_of: int | None, now: datetime
    ) -> tuple[list[Entry], ShownBoard | None] | None:
        """:meth:`_read_line` when the leases live in this process: a read, never the write lock.

        Taking the chat writes nothing, so the rows are read in a read-only
        transaction (or not at all, where the mirror knows the line); only rows
        that cannot be read back need a write (set aside).
        """
        mirror, memory = self._mirror, self._memory
        if mirror is not None and memory is not None:
            known = mirror.line(chat_id, after_id)
            shown_known, newest = mirror.newest_shown(shown_of)
            if known is not None and shown_known:
                if not await memory.claim(None, chat_id, self.owner, now, now + self._lease):
                    return None
                if not known and not mirror.line(chat_id, 0):
                    await memory.release(None, chat_id, self.owner)  # nothing to send: let go
                return known, newest
            mark = mirror.touched(chat_id)
        async with self._units(read_only=True) as uow:
            if not await self._leases.claim(uow, chat_id, self.owner, now, now + self._lease):
                return None
            rows = await uow.outbox.pending(chat_id, after_id)
            entries, unreadable = await read_rows(uow, chat_id, rows)
            newest = await _newest_shown(uow, shown_of)
            if not entries and not unreadable and not await uow.outbox.has_pending(chat_id):
                await self._leases.release(uow, chat_id, self.owner)  # nothing to send: let go
        if unreadable:
            async with self._units() as uow:
                await uow.outbox.settle(
                    unreadable, OutboxState.FAILED, self._clock(), error="unreadable"
                )
                if not entries and not await uow.outbox.has_pending(chat_id):
                    await self._leases.release(uow, chat_id, self.owner)
        elif mirror is not None and after_id == 0:
            mirror.seed(chat_id, mark, entries, shown_of, newest)
        return entries, newest

    async def boards_shown(self, game_id: int, limit: int) -> list[OutboxEntry]:
        """The game's last ``limit`` boards marked sent, oldest first (what a live board showed).

        A row that does not read back is left out (it was logged when it was set aside).
        """
        async with self._units(read_only=True) as uow:
            rows = await uow.outbox.sent_of_game(game_id, BOARD, limit)
        entries = []
        for row in rows:
            with contextlib.suppress(KeyError, TypeError, ValueError, SnapError):
                entry = entry_of(row)
                if isinstance(entry, OutboxEntry):
                    entries.append(entry)
        return entries

    async def chats_waiting(self, older_than: timedelta = timedelta(0)) -> list[int]:
        """Chats with a board unsent for longer than ``older_than`` that no live sender holds."""
        now = self._clock()
        async with self._units(read_only=True) as uow:
            waiting = await self._leases.waiting(uow, now - older_than, now)
        unheld = self._leases.unheld(waiting, now)
        if self._mirror is not None:
            self._mirror.forget(unheld)  # the database says they wait: read them from it
        return unheld

    async def boards_sent(
        self, chat_id: int, entry_ids: Sequence[int], game_id: int, version: int, message_id: int
    ) -> bool:
        """Mark the rows sent and store that ``message_id`` shows board ``version``, at once.

        One transaction: a board is never marked sent without the record of its
        message (reaction times start there), nor recorded and left unsent. The boards
        this worker showed meanwhile share it (:class:`~...support.batched.Batched`):
        they are all of chats it leased to send them.
        True: the chat has more to send (this worker keeps it); False: it is let go.
        """
        mark = _ShownMark(
            chat_id, tuple(entry_ids), ShownBoard(game_id, version, message_id, self._clock())
        )
        return await self._together.add(mark)

    async def _marks_shown(self, marks: Sequence[_ShownMark]) -> list[bool]:
        """:meth:`boards_sent` for each of ``marks``, in one transaction."""
        now = self._clock()
        shown = {entry_id: mark.shown.message_id for mark in marks for entry_id in mark.entry_ids}
        settled: dict[int, list[int]] = {}
        for mark in marks:
            settled.setdefault(mark.chat_id, []).extend(mark.entry_ids)
        async with self._units() as uow:
            await uow.outbox.mark_sent(shown, now)
            await uow.board_views.record([mark.shown for mark in marks])
            more = await self._keep_or_let_go(uow, settled)
        if self._mirror is not None:
            for mark in marks:
                self._mirror.settled(mark.chat_id, mark.entry_ids)
                self._mirror.shown(mark.shown)
        return [more[mark.chat_id] for mark in marks]

    async def line_sent(
        self,
        chat_id: int,
        entry_ids: Sequence[int],
        message_id: int,
        *,
        lobby_of: int | None = None,
    ) -> bool:
        """Mark lobby or notice rows sent; ``lobby_of``: store ``message_id`` as that game's lobby.

        One transaction: the lobby's message is stored with the rows it settles,
        so the next change of the lobby edits it. True: the chat has more to send.
        """
        async with self._units() as uow:
            await uow.outbox.settle(
                entry_ids, OutboxState.SENT, self._clock(), message_id=message_id
            )
            if lobby_of is not None:
                game = await uow.games.get(lobby_of, lock=False)
                if game is not None:
                    game.lobby_message_id = message_id
            more = (await self._keep_or_let_go(uow, {chat_id: entry_ids}))[chat_id]
        if self._mirror is not None:
            self._mirror.settled(chat_id, entry_ids)
            if lobby_of is not None:
                self._mirror.forget([chat_id])  # its lobby rows' message changed
        return more

    async def rows_failed(self, chat_id: int, entry_ids: Sequence[int], error: str) -> bool:
        """Mark the rows failed for good (Telegram refused them); True: the chat has more."""
        async with self._units() as uow:
            await uow.outbox.settle(entry_ids, OutboxState.FAILED, self._clock(), error=error[:200])
            more = (await self._keep_or_let_go(uow, {chat_id: entry_ids}))[chat_id]
        if self._mirror is not None:
            self._mirror.settled(chat_id, entry_ids)
        return more

    async def chat_gone(self, chat_id: int) -> None:
        """The bot was removed from the chat: its unsent rows are set aside, the chat let go."""
        async with self._units() as uow:
            rows = await uow.outbox.pending(chat_id)
            await uow.outbox.settle(
                [row.id for row in rows], OutboxState.FAILED, self._clock(), error="chat gone"
            )
            await self._let_go(uow, chat_id)
        if self._mirror is not None:
            self._mirror.forget([chat_id])

    async def _keep_or_let_go(
        self, uow: UnitOfWork, settled: Mapping[int, Sequence[int]]
    ) -> dict[int, bool]:
        """Per chat whose rows ``settled`` lists: whether it has more to send (else: let go)."""
        more: dict[int, bool] = {}
        unknown: list[int] = []
        mirror, memory = self._mirror, self._memory
        for chat_id, entry_ids in settled.items():
            line = None if mirror is None or memory is None else mirror.line(chat_id, 0)
            if line is None:
                unknown.append(chat_id)
                continue
            # Known here (the settled rows still in it): no need to look.
            more[chat_id] = any(entry.id not in entry_ids for entry in line)
            if not more[chat_id] and memory is not None:
                await memory.release(None, chat_id, self.owner)
        if unknown:
            more.update(await self._leases.keep_if_pending(uow, unknown, self.owner))
        for chat_id, kept in more.items():
            if not kept:
                self._held.pop(chat_id, None)
        return more

    async def _let_go(self, uow: UnitOfWork, chat_id: int) -> None:
        self._held.pop(chat_id, None)
        await self._leases.release(uow, chat_id, self.owner)

    async def release_all(self) -> None:
        """Give up every chat this worker holds (it stops: the others take them at once)."""
        self._held.clear()
        async with self._units() as uow:
            await self._leases.release_all(uow, self.owner)

    async def take_over_all(self) -> None:
        """End every worker's lease: only when no other worker is alive (a cold start).

        A process that died holding chats would otherwise keep them until their
        leases lapse; on a cold start (SQLite's one process, or the first
        PostgreSQL worker while no other is alive) whoever held them is gone.
        """
        self._held.clear()
        async with self._units() as uow:
            await self._leases.release_all(uow, None)

    async def with_states(
        self,
        keys: Sequence[int],
        step: Callable[[list[dict[str, Any]]], tuple[list[dict[str, Any]], T]],
    ) -> T:
        """Run ``step`` on the stored pace states of ``keys`` (chats; 0: the whole bot).

        The states are opaque here (the bot's flood-limit windows). Their rows are
        locked (in one order, so two workers never wait for each other) until the
        states ``step`` returns are stored, so the workers that share the database
        take their turns one at a time.
        """
        async with self._units() as uow:
            rows = {key: await uow.outbox.locked_pace(key) for key in sorted(set(keys))}
            states, result = step([dict(rows[key].pace or {}) for key in keys])
            for key, state in zip(keys, states, strict=True):
                rows[key].pace = state
            return result

    async def forget_settled(self, older_than: timedelta) -> int:
        """Delete rows settled longer than ``older_than`` ago; how many were deleted."""
        async with self._units() as uow:
            return await uow.outbox.forget_settled(self._clock() - older_than)
