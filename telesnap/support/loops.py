"""A background loop: rounds in one task, a wait between them, started and stopped once each.

A failed round is logged and tried again after a backoff: it never ends the loop, and
never goes unseen. The same failure again (an outage) is one line a round, its traceback once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress

from .retry import Backoff, FailureRun, short_cause


class BackgroundLoop:
    """Runs ``round`` again and again in a background task, from :meth:`start` to :meth:`stop`.

    ``round`` returns the seconds to wait before the next one; :meth:`wake` ends a wait early.
    """

    def __init__(
        self,
        round: Callable[[], Awaitable[float]],
        *,
        what: str,
        logger: logging.Logger,
        backoff: Backoff,
        name: str | None = None,
    ) -> None:
        self._round = round
        self._what = what
        self._logger = logger
        self._backoff = backoff
        self._name = name
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def running(self) -> bool:
        """Whether the loop was started and not stopped."""
        return self._task is not None

    def start(self, *, first_after_s: float = 0.0) -> None:
        """Start the rounds, the first ``first_after_s`` from now (nothing if running)."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._run(first_after_s), name=self._name)

    def wake(self) -> None:
        """Run the next round now, without waiting out the wait (or once this round ends)."""
        self._wake.set()

    async def stop(self) -> None:
        """Cancel the round or the wait in progress, and wait for the task to end.

        The flag ends the loop even if the cancellation is lost on the way (SQLAlchemy's
        pool lost it on Python 3.11); wait() rather than "await task", so a cancellation of our
        caller is not taken for the loop's own and swallowed.
        """
        task, self._task = self._task, None
        if task is not None:
            self._stopping = True
            self._wake.set()
            task.cancel()
            await asyncio.wait([task])

    async def _run(self, first_after_s: float) -> None:
        if first_after_s > 0:
            await self._wait(first_after_s)
        run = FailureRun(self._logger, self._what)
        while not self._stopping:
            self._wake.clear()
            try:
                wait = await self._round()
            except Exception as error:
                wait = self._backoff.next()
                again = f" again ({run.failures + 1} in a row)" if run.failures else ""
                run.failed(
                    error,
                    "%s failed%s: %s; trying again in %.1f s",
                    self._what,
                    again,
                    short_cause(error),
                    wait,
                )
            else:
                run.succeeded()
                self._backoff.reset()
            await self._wait(wait)

    async def _wait(self, seconds: float) -> None:
        """Until ``seconds`` have passed or :meth:`wake` was called."""
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a
        # cancellation that comes as the event is set, and stop() would hang.
        with suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
