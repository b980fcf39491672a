"""The timer loop: sleeps until the next timer is due, and fires it.

What a timer shows goes to the durable outbox as it fires: its commit wakes the chat's sender.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from ...support.loops import BackgroundLoop
from ...support.retry import Backoff
from ..housekeeping import HousekeepingService
from .service import TimerOutcome, TimerService

logger = logging.getLogger(__name__)

MAX_SLEEP = timedelta(seconds=60)
"""Look at the database at least this often (another worker may have set a timer)."""
FIRST_RETRY_S = 5.0
"""After a failed round, wait this long before the next; it doubles up to MAX_SLEEP."""


class TimerLoop:
    """Fires due timers in the background, and tidies old bookkeeping when it is due."""

    def __init__(
        self,
        timers: TimerService,
        housekeeping: HousekeepingService | None = None,
    ) -> None:
        self._timers = timers
        self._housekeeping = housekeeping
        self._next_look: datetime | None = None
        # The database is down, say: wait longer after each failed round.
        self._loop = BackgroundLoop(
            self._round,
            what="firing timers",
            logger=logger,
            backoff=Backoff(FIRST_RETRY_S, MAX_SLEEP.total_seconds()),
        )

    def wake(self, due_at: datetime) -> None:
        """A timer due at ``due_at`` was set: look again if that is before the next look."""
        if self._next_look is None or due_at < self._next_look:
            self._loop.wake()

    def start(self) -> None:
        """Start firing timers in the background."""
        self._loop.start()

    async def stop(self) -> None:
        """Stop firing timers (the ones not yet due stay in the database)."""
        await self._loop.stop()

    async def _round(self) -> float:
        await self.run_once()
        return await self._seconds_to_next()

    async def _tidy(self) -> None:
        if self._housekeeping is None:
            return
        try:
            tidied = await self._housekeeping.tidy_if_due(self._timers.now())
        except Exception:
            logger.exception("forgetting old bookkeeping failed; trying again later")
            return
        if tidied is not None and (tidied.processed_updates or tidied.fired_timers):
            logger.info(
                "forgot %d processed-update marks and %d fired timers",
                tidied.processed_updates,
                tidied.fired_timers,
            )

    async def _seconds_to_next(self) -> float:
        due = await self._timers.next_due_at()
        now = self._timers.now()
        self._next_look = now + MAX_SLEEP if due is None else min(due, now + MAX_SLEEP)
        return max(0.0, (self._next_look - now).total_seconds())

    async def run_once(self) -> list[TimerOutcome]:
        """Fire every due timer (what each shows is in the outbox); tidy when it is time to.

        A failing timer or tidy never stops the others; only a failure to fire any timer (the
        database is down) is raised, after tidying has had its turn.
        """
        try:
            return await self._timers.fire_due()
        finally:
            await self._tidy()
