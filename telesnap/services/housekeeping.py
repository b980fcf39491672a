"""Forgetting the bookkeeping nobody needs any more, so it does not grow for ever."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..storage.repositories.privacy import PrivacyRepository
from ..storage.uow import UnitOfWork
from .ports import UnitOfWorkFactory
from .privacy import PrivacyService

KEEP_PROCESSED_UPDATES = timedelta(days=2)
"""Telegram keeps an unconfirmed update for 24 hours: none older can come again."""
KEEP_PAYLOADS = timedelta(minutes=10)
"""A processed update's content (names, texts) is dropped this long after: its mark stays.
Ten minutes cover a race's callers being answered by another worker after a crash."""
KEEP_FIRED_TIMERS = timedelta(days=2)
"""A fired timer is kept only so that it fires once; two days cover any restart."""
TIDY_EVERY = timedelta(minutes=5)
BATCH = 1000
"""Rows deleted per transaction, so moves never wait long behind a purge."""


@dataclass(frozen=True, slots=True)
class Tidied:
    """How many records one purge forgot."""

    processed_updates: int
    fired_timers: int
    dropped_payloads: int = 0
    """Processed updates whose content was dropped (their marks stay)."""
    purged_chats: int = 0
    """Chats erased because their retention after removing the bot passed."""


class HousekeepingService:
    """Deletes old update marks, fired timers and payloads, and chats past their retention.

    A batch per transaction; one worker purges at a time (each batch takes the purge lock, on
    PostgreSQL an advisory lock), and a worker that finds it taken leaves the rest to its holder.
    """

    def __init__(self, units: UnitOfWorkFactory) -> None:
        self._units = units
        self._privacy = PrivacyService(units)
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
        payloads_before = now - KEEP_PAYLOADS
        timers_before = now - KEEP_FIRED_TIMERS
        return Tidied(
            processed_updates=await self._in_batches(
                lambda uow: uow.updates.forget_before(updates_before, BATCH)
            ),
            fired_timers=await self._in_batches(
                lambda uow: uow.timers.forget_fired_before(timers_before, BATCH)
            ),
            dropped_payloads=await self._in_batches(
                lambda uow: uow.updates.drop_payloads_before(payloads_before, BATCH)
            ),
            purged_chats=await self._privacy.purge_removed_chats(now),
        )

    async def _in_batches(self, forget: Callable[[UnitOfWork], Awaitable[int]]) -> int:
        total = 0
        while True:
            async with self._units() as uow:
                if not await PrivacyRepository(uow.session).try_purge_lock():
                    return total  # another worker is purging
                batch = await forget(uow)
            total += batch
            if batch < BATCH:
                return total
