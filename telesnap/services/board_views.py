"""When each board was shown: stored a moment later, many boards in one transaction.

Reaction times are measured from the stored moment a board version reached
Telegram, and a Flip on the newest board in the chat acts on the game as it
is now; both read these rows, so they hold after a restart and on any worker.

A board is recorded right after its message is sent, and waits in memory
(answering for itself meanwhile) for :data:`STORE_GRACE_S`; then it is stored
in one short transaction with every board waiting by then, so busy chats
store a few dozen boards per transaction instead of one each. A call on a
game stores the game's waiting boards in its own transaction
(:meth:`ShownBoards.carry`): it learns there whether its board's row is the
first for that version (the one its reaction time starts from) at the cost
of the read it would need otherwise. A board whose carrying change fails or
is refused waits again. If a batch fails, each of its boards is tried again
alone, so one board that cannot be stored (its game deleted meanwhile) fails
only its own call.

The first message to show a version is the one its reaction times start
from, and that row never changes: so once the process has stored or read a
board's moment, it keeps it (the :data:`KNOWN_CAPACITY` newest) instead of
reading it again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime

from ..storage.repositories import ShownBoard
from ..storage.uow import UnitOfWork
from .ports import UnitOfWorkFactory

STORE_GRACE_S = 0.25
"""How long a shown board waits before it is stored (with every board waiting by then).

Short enough that a press handled by another worker finds the row (no one reacts to a
board within a quarter of a second of its reaching Telegram, which still has to show it),
long enough to gather the boards of many busy chats into one transaction.
"""
KNOWN_CAPACITY = 4096
"""How many boards' moments the process keeps (the newest); older ones are read again."""

BoardKey = tuple[int, int]
"""``(game_id, board_version)``."""


@dataclass(eq=False)
class _Waiting:
    """A shown board not stored yet, and who waits for it to be."""

    board: ShownBoard
    stored: asyncio.Future[None]
    carrier: BoardCarrier | None = None
    """The change storing it now (None: it waits for one, or for the grace to end)."""
    moved: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when its carrier commits it or gives it back."""
    in_batch: bool = False
    """A transaction of the boards' own is storing it: no change may take it meanwhile
    (with PostgreSQL, both inserting the row would wait for each other's locks)."""


class ShownBoards:
    """Stores the boards shown, and answers when one was shown (also before it is stored)."""

    def __init__(
        self,
        units: UnitOfWorkFactory,
        *,
        grace_s: float = STORE_GRACE_S,
        known_capacity: int = KNOWN_CAPACITY,
    ) -> None:
        """Store through ``units``; a board waits ``grace_s`` to be stored with others."""
        self._units = units
        self._grace_s = grace_s
        self._known_capacity = known_capacity
        self._waiting: dict[BoardKey, _Waiting] = {}
        self._known: OrderedDict[BoardKey, datetime] = OrderedDict()
        self._writing = asyncio.Lock()

    async def record(self, board: ShownBoard) -> None:
        """Store ``board`` (after the grace, or with a call on its game); return once stored.

        Cancelled while the board waits (the bot is stopping), it stores the board first.
        """
        key = (board.game_id, board.version)
        if key in self._known:
            return  # shown before: the first showing counts, and it is stored
        waiting = self._waiting.get(key)
        if waiting is None:
            future = asyncio.get_running_loop().create_future()
            waiting = self._waiting[key] = _Waiting(board, future)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(waiting.stored), self._grace_s)
            await self._store_alone(waiting)
        except asyncio.CancelledError:
            if not waiting.stored.done() and waiting.carrier is None:
                await self._store_alone(waiting)
            raise

    async def _store_alone(self, waiting: _Waiting) -> None:
        """Store the board and all that wait with it (unless a change does); raise its error."""
        while not waiting.stored.done():
            if waiting.carrier is not None:
                waiting.moved.clear()
                await waiting.moved.wait()
                continue
            async with self._writing:
                if not waiting.stored.done() and waiting.carrier is None:
                    await self._write_waiting()
        await waiting.stored

    async def _write_waiting(self) -> None:
        batch = [waiting for waiting in self._waiting.values() if waiting.carrier is None]
        for waiting in batch:
            waiting.in_batch = True
        try:
            await self._store(batch)
        except Exception as error:
            if len(batch) == 1:
                self._settle(batch[0], error)
                return
            for waiting in batch:
                try:
                    await self._store([waiting])
                except Exception as alone:
                    self._settle(waiting, alone)
            return

    async def _store(self, batch: list[_Waiting]) -> None:
        async with self._units() as uow:
            inserted = await uow.board_views.record([waiting.board for waiting in batch])
        for waiting in batch:
            self._settle(waiting, None, first=waiting_key(waiting) in inserted)

    def _settle(self, waiting: _Waiting, error: Exception | None, *, first: bool = False) -> None:
        key = waiting_key(waiting)
        if self._waiting.get(key) is waiting:
            del self._waiting[key]
        if first:
            self._remember(key, waiting.board.shown_at)
        if not waiting.stored.done():
            if error is None:
                waiting.stored.set_result(None)
            else:
                waiting.stored.set_exception(error)
        waiting.moved.set()

    def _take(self, game_id: int, carrier: BoardCarrier) -> list[_Waiting]:
        """The game's boards waiting for a change, now carried by ``carrier``."""
        taken = [
            waiting
            for (game, _), waiting in self._waiting.items()
            if game == game_id and waiting.carrier is None and not waiting.in_batch
        ]
        for waiting in taken:
            waiting.carrier = carrier
        return taken

    def _remember(self, key: BoardKey, shown_at: datetime) -> None:
        self._known[key] = shown_at
        self._known.move_to_end(key)
        while len(self._known) > self._known_capacity:
            self._known.popitem(last=False)

    @contextlib.asynccontextmanager
    async def carry(self) -> AsyncIterator[BoardCarrier]:
        """Wrap a change (its transaction included) that may store waiting boards of its game.

        What the change stored counts once it has committed; if it fails, the boards
        go back to waiting (and are stored alone, once their grace is over).
        """
        carrier = BoardCarrier(self)
        try:
            yield carrier
        except BaseException:
            carrier.give_back()
            raise
        carrier.committed()

    async def shown_at(self, uow: UnitOfWork, game_id: int, version: int) -> datetime | None:
        """When board ``version`` of the game was first shown (None: never, as far as known)."""
        key = (game_id, version)
        known = self._known.get(key)
        if known is not None:
            return known
        stored = await uow.board_views.shown_at(game_id, version)
        if stored is not None:
            self._remember(key, stored)
            return stored
        waiting = self._waiting.get(key)
        return waiting.board.shown_at if waiting is not None else None

    async def newest_version(self, uow: UnitOfWork, game_id: int) -> int | None:
        """The highest board version of the game shown so far (None before any)."""
        stored = await uow.board_views.newest_version(game_id)
        waiting = [version for (game, version) in self._waiting if game == game_id]
        return max([*waiting, *([] if stored is None else [stored])], default=None)


class BoardCarrier:
    """The boards one change stores in its own transaction (see :meth:`ShownBoards.carry`)."""

    def __init__(self, boards: ShownBoards) -> None:
        """Carry boards waiting in ``boards``."""
        self._boards = boards
        self._carried: list[_Waiting] = []
        self._first: set[BoardKey] = set()

    async def store_waiting(self, uow: UnitOfWork, game_id: int) -> None:
        """Store the game's waiting boards in ``uow`` (the change's own transaction)."""
        taken = self._boards._take(game_id, self)
        if not taken:
            return
        self._carried += taken
        self._first |= await uow.board_views.record([waiting.board for waiting in taken])

    def shown_here_at(self, game_id: int, version: int) -> datetime | None:
        """When the board was first shown, if this change is what stores it first."""
        for waiting in self._carried:
            if waiting_key(waiting) == (game_id, version) and (game_id, version) in self._first:
                return waiting.board.shown_at
        return None

    def committed(self) -> None:
        """The change committed: the boards it carried are stored."""
        for waiting in self._carried:
            self._boards._settle(waiting, None, first=waiting_key(waiting) in self._first)
        self._carried.clear()

    def give_back(self) -> None:
        """The change failed: its boards wait again."""
        for waiting in self._carried:
            waiting.carrier = None
            waiting.moved.set()
        self._carried.clear()


def waiting_key(waiting: _Waiting) -> BoardKey:
    """The game and board version of a waiting board."""
    return (waiting.board.game_id, waiting.board.version)
