"""The timer loop: sleeps until the next timer is due, fires it, and shows what it did.

What a timer must show (a reminder, a closed lobby, a board with why it moved)
was written to the durable outbox when it fired; the loop queues the posts that
send it.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from datetime import datetime, timedelta

from ...services.housekeeping import HousekeepingService
from ...services.timers.service import TimerOutcome, TimerService
from .runtime import Runtime

logger = logging.getLogger(__name__)

MAX_SLEEP = timedelta(seconds=60)
"""Look at the database at least this often (another worker may have set a timer)."""
FIRST_RETRY_S = 5.0
"""After a failed round, wait this long before the next; it doubles up to MAX_SLEEP."""


def wait_after_failures(failed_rounds: int) -> float:
    """Seconds to wait after ``failed_rounds`` rounds in a row failed (backoff, capped).

    >>> [wait_after_failures(n) for n in (1, 2, 3, 4, 5, 20)]
    [5.0, 10.0, 20.0, 40.0, 60.0, 60.0]
    """
    doubled: float = FIRST_RETRY_S * 2 ** min(failed_rounds - 1, 10)
    return min(MAX_SLEEP.total_seconds(), doubled)


class TimerLoop:
    """Fires due timers in the background, and tidies old bookkeeping once an hour.

    ``run_once`` lets tests drive it by hand.
    """

    def __init__(
        self,
        runtime: Runtime,
        timers: TimerService,
        housekeeping: HousekeepingService | None = None,
    ) -> None:
        self._runtime = runtime
        self._timers = timers
        self._housekeeping = housekeeping
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._next_look: datetime | None = None

    def wake(self, due_at: datetime) -> None:
        """A timer due at ``due_at`` was set: look again if that is before the next look."""
        if self._next_look is None or due_at < self._next_look:
            self._wake.set()

    def start(self) -> None:
        """Start firing timers in the background."""
        self._stopping = False
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop firing timers (the ones not yet due stay in the database)."""
        if self._task is not None:
            # The flag ends the loop even if the cancellation is lost on the way
            # (SQLAlchemy's pool lost it on Python 3.11 before 2.1.7); wait() rather
            # than "await task", so a cancellation of our caller is not taken for
            # the loop's own and swallowed.
            self._stopping = True
            self._wake.set()
            self._task.cancel()
            await asyncio.wait([self._task])
            self._task = None

    async def _run(self) -> None:
        failed_rounds = 0
        while not self._stopping:
            self._wake.clear()
            try:
                await self.run_once()
                wait = await self._seconds_to_next()
                failed_rounds = 0
            except Exception:
                # The database is down, say: wait longer after each failed round.
                failed_rounds += 1
                wait = wait_after_failures(failed_rounds)
                logger.exception("firing timers failed; trying again in %.0f s", wait)
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a
            # cancellation that comes as the event is set, and stop() would hang.
            with suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

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
        """Fire every due timer and show what each did; tidy when it is time to.

        Each job is its own boundary: a timer that fails (the service retries it),
        an outcome that cannot be shown, or tidying that fails never stops the
        others. Only a failure to fire any timer at all (the database is down)
        is raised, after tidying has had its turn.
        """
        try:
            outcomes = await self._timers.fire_due()
        finally:
            await self._tidy()
        for outcome in outcomes:
            try:
                await self._show(outcome)
            except Exception:
                place = outcome.place
                game_id = outcome.play.table.game_id if outcome.play is not None else None
                logger.exception(
                    "showing what a %s timer did failed (chat %s, topic %s, game %s)",
                    outcome.kind.value,
                    place.chat_id,
                    place.thread_id,
                    game_id,
                )
        return outcomes

    async def _show(self, outcome: TimerOutcome) -> None:
        """Queue what the timer wrote to the outbox: a notice, or its game's board and note."""
        presenter = self._runtime.presenter
        place = outcome.place
        presenter.use_language(place, outcome.language)
        if outcome.play is not None:
            presenter.show_play(place, outcome.play)
        else:
            presenter.show_notices(place)  # a reminder; a closed lobby and its notice
