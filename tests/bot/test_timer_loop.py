"""The timer loop stops when asked, whatever it was doing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from telesnap.bot.handlers.timer_loop import TimerLoop
from telesnap.services.timers.planner import AbsentPlayer, TimerKind
from telesnap.services.timers.service import TimerOutcome
from telesnap.services.types import Place

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


class SayingRuntime:
    """A runtime that records which chats' notices are queued, and fails in one chat."""

    def __init__(self, broken_chat: int) -> None:
        self.broken_chat = broken_chat
        self.shown: list[int] = []
        self.presenter = self

    def use_language(self, place: Place, chosen: str | None) -> str:
        return chosen or "en"

    def show_notices(self, place: Place) -> None:
        if place.chat_id == self.broken_chat:
            raise RuntimeError("this chat cannot be shown anything")
        self.shown.append(place.chat_id)


class DueTimers(IdleTimers):
    """Two reminders due at once, in two chats."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail

    async def fire_due(self) -> list[Any]:
        if self.fail:
            raise ConnectionError("the database is unavailable")
        return [
            TimerOutcome(
                TimerKind.TURN_REMINDER, Place(chat_id), absent=AbsentPlayer(7, "Ann", "reminded")
            )
            for chat_id in (-1, -2)
        ]


class CountingHousekeeping:
    def __init__(self) -> None:
        self.rounds = 0

    async def tidy_if_due(self, now: datetime) -> None:
        self.rounds += 1


async def test_an_outcome_that_cannot_be_shown_does_not_hide_the_next_one() -> None:
    runtime = SayingRuntime(broken_chat=-1)
    loop = TimerLoop(runtime=runtime, timers=DueTimers())  # type: ignore[arg-type]
    outcomes = await loop.run_once()
    assert len(outcomes) == 2
    assert runtime.shown == [-2], "the reminder in the other chat is queued"


async def test_tidying_still_runs_when_no_timer_can_be_fired() -> None:
    housekeeping = CountingHousekeeping()
    loop = TimerLoop(
        runtime=SayingRuntime(broken_chat=0),  # type: ignore[arg-type]
        timers=DueTimers(fail=True),  # type: ignore[arg-type]
        housekeeping=housekeeping,  # type: ignore[arg-type]
    )
    with pytest.raises(ConnectionError):
        await loop.run_once()
    assert housekeeping.rounds == 1
