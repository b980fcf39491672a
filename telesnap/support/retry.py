"""Backoff: the delays between attempts, doubling from a first delay up to a cap.

Every retry in the process waits the delays of one of these, and logs each failure: a run of
the same failure (an outage) as one line each, its traceback once (:class:`FailureRun`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass
class Backoff:
    """``first_s``, then twice as long after each failure in a row, never more than ``max_s``.

    >>> backoff = Backoff(0.5, 3.0)
    >>> [backoff.next() for _ in range(5)]
    [0.5, 1.0, 2.0, 3.0, 3.0]
    >>> backoff.reset(); backoff.next()
    0.5
    """

    first_s: float
    max_s: float
    failures: int = field(default=0, init=False)
    """How many failures in a row :meth:`next` was asked about since the last reset."""

    def __post_init__(self) -> None:
        if not 0 <= self.first_s <= self.max_s:
            raise ValueError("a backoff's first delay is between 0 and its cap")

    def delay(self, failures: int) -> float:
        """The delay after ``failures`` failures in a row (the first after one)."""
        if failures <= 1:
            return self.first_s
        if self.first_s == 0:
            return 0.0
        # Doubling stops once the cap is reached, so huge counts never overflow.
        doubled = self.first_s
        for _ in range(failures - 1):
            doubled *= 2
            if doubled >= self.max_s:
                return self.max_s
        return doubled

    def next(self) -> float:
        """One more failure: the delay to wait before the next attempt."""
        self.failures += 1
        return self.delay(self.failures)

    def reset(self) -> None:
        """An attempt succeeded: the next failure waits the first delay again."""
        self.failures = 0


class FailureRun:
    """The failures in a row of one piece of work (``what``), as the log tells them.

    A failure is an error line; one whose cause differs from the one before it also carries
    its traceback, so an outage that fails every attempt the same way gives one traceback,
    not one per attempt. The first success after failures says so.
    """

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self._logger = logger
        self._what = what
        self.failures = 0
        """How many failures in a row, since the last success."""
        self._last = ""

    def failed(self, error: Exception, message: str, *args: object) -> None:
        """Log ``message`` (``%`` ``args``) as a failure, with ``error``'s traceback if new."""
        self.failures += 1
        new = repr(error) != self._last
        self._last = repr(error)
        self._logger.error(message, *args, exc_info=error if new else None)

    def succeeded(self) -> None:
        """The work succeeded: after failures, say it works again (the run starts again)."""
        if self.failures:
            self._logger.info("%s works again, after %d failures", self._what, self.failures)
        self.failures, self._last = 0, ""


def short_cause(error: BaseException) -> str:
    """What went wrong, in a line: a database error without the statement SQLAlchemy adds.

    >>> short_cause(ConnectionResetError("the database closed the connection"))
    'ConnectionResetError: the database closed the connection'
    """
    cause = getattr(error, "orig", None) or error
    return f"{type(cause).__name__}: {cause}"


async def retry(
    attempt: Callable[[], Awaitable[T]],
    backoff: Backoff,
    *,
    logger: logging.Logger,
    what: str,
    after_failure: Callable[[], Awaitable[None]] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Run ``attempt`` until it succeeds; its result.

    Each failure is logged (:class:`FailureRun`) and ``after_failure`` runs before the delay; a
    cancellation is never retried.
    """
    run = FailureRun(logger, what)
    while True:
        try:
            result = await attempt()
        except Exception as error:
            delay = backoff.next()
            run.failed(error, "%s failed (%s); retrying in %.1f s", what, short_cause(error), delay)
            if after_failure is not None:
                await after_failure()
            await sleep(delay)
        else:
            backoff.reset()
            run.succeeded()
            return result
