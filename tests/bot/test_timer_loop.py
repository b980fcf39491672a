"""The timer loop stops when asked, whatever it was doing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from telesnap.bot.timer_loop import TimerLoop

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


class IdleTimers:
    """A timer service with nothing due; says when the loop has gone to sleep."""

    def __init__(self) -> None:
        self.asleep = asyncio.Event()

    def now(self) -> datetime:
        return NOW

    async def fire_due(self) -> list[Any]:
        return []

    async def next_due_at(self) -> datetime | None:
        self.asleep.set()
        return None


@pytest.mark.parametrize("yields", [0, 1, 2, 3])
async def test_stop_wins_over_a_wake_up_that_comes_at_the_same_moment(yields: int) -> None:
    timers = IdleTimers()
    loop = TimerLoop(runtime=None, timers=timers)  # type: ignore[arg-type]
    loop.start()
    await timers.asleep.wait()
    loop.wake(NOW + timedelta(seconds=1))  # a timer due before the next look wakes it
    for _ in range(yields):
        await asyncio.sleep(0)  # let the wake-up travel part of the way
    async with asyncio.timeout(10):
        await loop.stop()
