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
        self._skips: list[tuple[datetime, timedelta]] = []
        """Each skip: the moment this clock jumped to, and its offset from then on."""

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
        self._skips.append((self(), self._offset))

    def wall_time_at(self, moment: datetime) -> datetime:
        """The wall time when this clock read ``moment``: a call's reaction is timed on the wall.

        >>> from datetime import UTC, datetime, timedelta
        >>> wall = datetime(2026, 1, 1, tzinfo=UTC)
        >>> clock = MovableClock(lambda: wall)
        >>> shown = clock()
        >>> clock.skip(60)
        >>> clock.wall_time_at(shown) == wall, clock.wall_time_at(clock()) == wall
        (True, True)
        """
        offset = timedelta()
        for jumped_to, after in self._skips:
            if moment < jumped_to:
                break
            offset = after
        return moment - offset
