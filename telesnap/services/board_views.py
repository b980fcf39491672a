"""When each board was shown: stored in short transactions of their own, batched under load.

Reaction times are measured from the stored moment a board version reached
Telegram, and a Flip on the newest board in the chat acts on the game as it
is now; both read these rows, so they hold after a restart and on any worker.

A board is recorded right after its message is sent. When many boards are
sent at once (busy chats), the ones that arrive while a write is under way
go together in the next one, so storing them costs one transaction per batch,
not per board. Until its row is committed, a board is answered from memory.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from ..storage.repositories import ShownBoard
from ..storage.uow import UnitOfWork
from .ports import UnitOfWorkFactory


class ShownBoards:
    """Stores the boards shown, and answers when one was shown (also before it is stored)."""

    def __init__(self, units: UnitOfWorkFactory) -> None:
        self._units = units
        self._waiting: dict[tuple[int, int], tuple[ShownBoard, asyncio.Future[None]]] = {}
        self._writing = asyncio.Lock()

    async def record(self, board: ShownBoard) -> None:
        """Store ``board``, with whatever others are waiting; return once it is stored.

        If a batch fails, each of its boards is tried again alone, so one board that
        cannot be stored (its game deleted meanwhile) fails only its own call.
        """
        key = (board.game_id, board.version)
        entry = self._waiting.get(key)
        if entry is None:
            entry = self._waiting[key] = (board, asyncio.get_running_loop().create_future())
        async with self._writing:
            if not entry[1].done():
                await self._write_waiting()
        await entry[1]

    async def _write_waiting(self) -> None:
        batch = list(self._waiting.items())
        try:
            await self._store([board for _, (board, _) in batch])
        except Exception as error:
            if len(batch) == 1:
                self._settle(batch[0], error)
                return
            for item in batch:
                try:
                    await self._store([item[1][0]])
                except Exception as alone:
                    self._settle(item, alone)
                else:
                    self._settle(item, None)
            return
        for item in batch:
            self._settle(item, None)

    async def _store(self, boards: list[ShownBoard]) -> None:
        async with self._units() as uow:
            await uow.board_views.record(boards)

    def _settle(
        self,
        item: tuple[tuple[int, int], tuple[ShownBoard, asyncio.Future[None]]],
        error: Exception | None,
    ) -> None:
        key, (_, future) = item
        del self._waiting[key]
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    async def shown_at(self, uow: UnitOfWork, game_id: int, version: int) -> datetime | None:
        """When board ``version`` of the game was first shown (None: never, as far as known)."""
        stored = await uow.board_views.shown_at(game_id, version)
        if stored is not None:
            return stored
        waiting = self._waiting.get((game_id, version))
        return waiting[0].shown_at if waiting is not None else None

    async def newest_version(self, uow: UnitOfWork, game_id: int) -> int | None:
        """The highest board version of the game shown so far (None before any)."""
        stored = await uow.board_views.newest_version(game_id)
        waiting = [version for (game, version) in self._waiting if game == game_id]
        return max([*waiting, *([] if stored is None else [stored])], default=None)
