"""Group commit: the calls that arrive while one batch runs go together in the next.

Nothing waits for a timer: an idle caller pays one turn of the event loop, a busy
one shares its transaction with the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Batched(Generic[T, R]):
    """Runs ``run`` on the items added meanwhile; each :meth:`add` gets its item's result.

    If ``run`` raises, every item of that batch gets the error; the next batch runs as usual.

    >>> async def double(items):
    ...     return [2 * item for item in items]
    >>> async def main():
    ...     batched = Batched(double)
    ...     return await asyncio.gather(*(batched.add(n) for n in range(3))), batched.batches
    >>> asyncio.run(main())
    ([0, 2, 4], 1)
    """

    def __init__(self, run: Callable[[Sequence[T]], Awaitable[Sequence[R]]]) -> None:
        self._run = run
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._task: asyncio.Task[None] | None = None
        self.batches = 0
        """How many batches ran (to see how many calls each took)."""

    async def add(self, item: T) -> R:
        """Run ``item`` with the batch that starts next; its result (or the batch's error).

        A caller that is cancelled while it waits leaves its item in the batch.
        """
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        if self._task is None:
            self._task = asyncio.create_task(self._drain())
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        batch: list[tuple[T, asyncio.Future[R]]] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                self.batches += 1
                try:
                    results = await self._run([item for item, _ in batch])
                except Exception as error:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(error)
                    continue
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        finally:
            self._task = None
            # Stopped midway (the loop is closing): nobody is left waiting for ever.
            for _, future in [*batch, *self._waiting]:
                if not future.done():
                    future.cancel()
