"""When each board was first shown: what reaction times start from, and which board is newest.

Board views are recorded in the statement that marks the board's row sent, and read from
the database, so reaction times and Flips on the newest board hold after a restart and on
any worker. A version's first showing never changes, so once read it is kept (the
:data:`KNOWN_CAPACITY` newest).
"""

from __future__ import annotations

from datetime import datetime

from ...storage.uow import UnitOfWork
from ...support.bounded import BoundedDict

KNOWN_CAPACITY = 4096
"""How many boards' moments the process keeps (the newest); older ones are read again."""

BoardKey = tuple[int, int]
"""``(game_id, board_version)``."""


class ShownBoards:
    """Answers when a board was first shown, and which board of a game is the newest shown."""

    def __init__(self, *, known_capacity: int = KNOWN_CAPACITY) -> None:
        """Keep the moments of the ``known_capacity`` boards read last."""
        self._known: BoundedDict[BoardKey, datetime] = BoundedDict(known_capacity)

    async def shown_at(self, uow: UnitOfWork, game_id: int, version: int) -> datetime | None:
        """When board ``version`` of the game was first shown (None: never, as far as stored)."""
        key = (game_id, version)
        known = self._known.get(key)
        if known is not None:
            self._known.touch(key)
            return known
        stored = await self.stored_shown_at(uow, game_id, version)
        if stored is not None:
            self._known[key] = stored
        return stored

    @staticmethod
    async def stored_shown_at(uow: UnitOfWork, game_id: int, version: int) -> datetime | None:
        """:meth:`shown_at` read from the database, for a reader that needs it rarely."""
        return await uow.outbox.board_shown_at(game_id, version)

    @staticmethod
    async def newest_row_shown_at(uow: UnitOfWork, game_id: int, version: int) -> datetime | None:
        """When the newest board row of ``version`` was shown (a skip's: the version's newest)."""
        return await uow.outbox.newest_row_shown_at(game_id, version)

    @staticmethod
    async def newest_version(uow: UnitOfWork, game_id: int) -> int | None:
        """The highest board version of the game shown so far (None before any)."""
        return await uow.outbox.newest_board_version(game_id)
