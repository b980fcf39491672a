"""Background jobs started and not awaited: kept referenced until they end, failures logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

logger = logging.getLogger(__name__)


class TaskSet:
    """Runs coroutines in the background, keeping a reference to each until it ends.

    A job that fails is logged with what it was; it stops nothing else.

    >>> async def main() -> list[int]:
    ...     done: list[int] = []
    ...     async def job() -> None:
    ...         done.append(1)
    ...     jobs = TaskSet()
    ...     jobs.spawn(job())
    ...     await jobs.settle()
    ...     return done
    >>> asyncio.run(main())
    [1]
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` in the background."""
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            logger.error("background job %s failed: %r", task.get_coro(), error, exc_info=error)

    async def settle(self) -> None:
        """Wait until the jobs started so far (and those they started) are done."""
        while pending := [task for task in self._tasks if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    async def close(self) -> None:
        """Cancel the jobs still running, and wait for them."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
