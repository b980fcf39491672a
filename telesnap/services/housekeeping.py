"""Forgetting the bookkeeping nobody needs any more, so it does not grow for ever."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..storage.uow import UnitOfWork
from .ports import UnitOfWorkFactory

KEEP_PROCESSED_UPDATES = timedelta(days=2)
"""Telegram keeps an unconfirmed update for 24 hours: none older can come again."""
KEEP_FIRED_TIMERS = timedelta(days=2)
"""A fired timer is kept only so that it fires once; two days cover any restart."""
TIDY_EVERY = timedelta(hours=1)
BATCH = 1000
"""Rows deleted per transaction, so moves never wait long behind a purge."""


@dataclass(frozen=True, slots=True)
class Tidied:
    """How many records one purge forgot."""

    processed_updates: int
    fired_timers: int


class HousekeepingService:
    """Deletes old processed-update marks and fired timers, a batch per transaction."""

    def __init__(self, units: UnitOfWorkFactory) -> None:
        self._units = units
        self._next_tidy: datetime | None = None

    async def tidy_if_due(self, now: datetime) -> Tidied | None:
        """Tidy at the first call, then once every ``TIDY_EVERY``; None when not due."""
        if self._next_tidy is not None and now < self._next_tidy:
            return None
        tidied = await self.tidy(now)
        self._next_tidy = now + TIDY_EVERY
        return tidied

    async def tidy(self, now: datetime) -> Tidied:
        """Forget the marks of updates processed, and the timers fired, long before ``now``."""
        updates_before = now - KEEP_PROCESSED_UPDATES
        timers_before = now - KEEP_FIRED_TIMERS
        return Tidied(
            processed_updates=await self._in_batches(
                lambda uow: uow.updates.forget_before(updates_before, BATCH)
            ),
            fired_timers=await self._in_batches(
                lambda uow: uow.timers.forget_fired_before(timers_before, BATCH)
            ),
        )

    async def _in_batches(self, forget: Callable[[UnitOfWork], Awaitable[int]]) -> int:
        total = 0
        while True:
            async with self._units() as uow:
                batch = await forget(uow)
            total += batch
            if batch < BATCH:
                return total
