"""A change signal: coroutines wait until something changes, without polling.

>>> async def demo() -> bool:
...     signal = ChangeSignal()
...     waiter = asyncio.ensure_future(signal.wait_until(lambda: signal.version > 0, 1.0))
...     await asyncio.sleep(0)
...     signal.notify()
...     return await waiter
>>> asyncio.run(demo())
True
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable


class ChangeSignal:
    """A version counter with an event that fires each time it is bumped."""

    def __init__(self) -> None:
        self.version = 0
        self._event: asyncio.Event | None = None

    def notify(self) -> None:
        """Bump the version and wake every waiter."""
        self.version += 1
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self, seconds: float) -> None:
        """Wait for the next :meth:`notify`, at most ``seconds``."""
        if self._event is None:
            self._event = asyncio.Event()
        event = self._event
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(seconds, 0.0)):
                await event.wait()

    async def wait_until(self, condition: Callable[[], bool], within: float) -> bool:
        """Wait until ``condition()`` holds (checked at each change), at most ``within`` seconds.

        Return whether it holds.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not condition():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            await self.wait(remaining)
        return True
