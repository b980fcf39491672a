"""The bot's clock in the sandbox: the real time, plus however far it has been skipped.

>>> from datetime import UTC, datetime
>>> clock = MovableClock(lambda: datetime(2026, 1, 1, tzinfo=UTC))
>>> clock.skip(90)
>>> clock().isoformat(), clock.skipped_seconds
('2026-01-01T00:01:30+00:00', 90.0)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from ..storage.models.base import utc_now


class MovableClock:
    """Wall time that can jump ahead (never back), for the bot's timers."""

    def __init__(self, now: Callable[[], datetime] = utc_now) -> None:
        self._now = now
        self._offset = timedelta()

    def __call__(self) -> datetime:
        """The time as the bot sees it."""
        return self._now() + self._offset

    @property
    def skipped_seconds(self) -> float:
        """How far the clock has been moved ahead in all."""
        return self._offset.total_seconds()

    def skip(self, seconds: float) -> None:
        """Move the clock ``seconds`` ahead."""
        if seconds <= 0:
            raise ValueError("the clock only moves ahead")
        self._offset += timedelta(seconds=seconds)
