"""The background loop: rounds until stopped, a failed round logged and tried again."""

from __future__ import annotations

import asyncio
import logging

import pytest

from telesnap.support.loops import BackgroundLoop
from telesnap.support.retry import Backoff

LOGGER = logging.getLogger("tests.loops")
LONG_S = 3600.0
"""A wait no test lives through: the next round comes only when the test wakes the loop."""


class Rounds:
    """A loop's rounds, driven by the test: each fails with the next planned error, if any."""

    def __init__(self, *failures: Exception | None) -> None:
        self.failures = list(failures)
        self.count = 0
        self.ran = asyncio.Event()

    async def round(self) -> float:
        self.count += 1
        self.ran.set()
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            raise failure
        return LONG_S

    async def next(self) -> None:
        await self.ran.wait()
        self.ran.clear()


def loop_of(rounds: Rounds, backoff: Backoff | None = None) -> BackgroundLoop:
    return BackgroundLoop(
        rounds.round,
        what="looking for unsent boards",
        logger=LOGGER,
        backoff=backoff or Backoff(LONG_S, LONG_S),
    )


async def test_the_first_round_runs_at_once_and_wake_runs_the_next() -> None:
    rounds = Rounds()
    loop = loop_of(rounds)
    loop.start()
    await rounds.next()
    assert rounds.count == 1
    loop.wake()
    await rounds.next()
    assert rounds.count == 2
    await loop.stop()


async def test_a_failed_round_is_logged_with_its_delay_and_tried_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rounds = Rounds(OSError("database down"), OSError("still down"))
    loop = loop_of(rounds, Backoff(LONG_S / 4, LONG_S))
    with caplog.at_level(logging.ERROR, logger=LOGGER.name):
        loop.start()
        for _ in range(3):
            await rounds.next()
            loop.wake()
        await loop.stop()
    assert rounds.count == 3, "the loop went on after its failures"
    assert [r.getMessage() for r in caplog.records] == [
        "looking for unsent boards failed: OSError: database down; trying again in 900.0 s",
        "looking for unsent boards failed again (2 in a row): OSError: still down;"
        " trying again in 1800.0 s",
    ]
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == [
        "database down",
        "still down",
    ]


async def test_stop_cancels_a_round_in_progress_and_no_round_follows() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()
    count = 0

    async def stuck_round() -> float:
        nonlocal count
        count += 1
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 0.0

    loop = BackgroundLoop(stuck_round, what="x", logger=LOGGER, backoff=Backoff(0.0, 0.0))
    loop.start()
    await started.wait()
    await loop.stop()
    assert cancelled.is_set()
    assert not loop.running
    await asyncio.sleep(0)  # a task that would run a next round gets its turn here
    assert count == 1


async def test_stop_ends_the_wait_between_rounds_and_the_loop_starts_again() -> None:
    rounds = Rounds()
    loop = loop_of(rounds)
    loop.start()
    await rounds.next()
    await loop.stop()
    assert not loop.running
    loop.start()
    await rounds.next()
    assert rounds.count == 2
    assert loop.running
    await loop.stop()


async def test_a_first_round_asked_for_later_waits_until_then_or_a_wake() -> None:
    rounds = Rounds()
    loop = loop_of(rounds)
    loop.start(first_after_s=LONG_S)
    for _ in range(3):
        await asyncio.sleep(0)
    assert rounds.count == 0, "the first round waits"
    loop.wake()
    await rounds.next()
    assert rounds.count == 1
    await loop.stop()


async def test_an_outage_logs_its_traceback_once_then_a_line_a_round(
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = ConnectionResetError("the database went away")
    rounds = Rounds(down, ConnectionResetError("the database went away"), down, None)
    loop = loop_of(rounds, Backoff(0.001, 0.001))
    with caplog.at_level(logging.INFO, logger=LOGGER.name):
        loop.start()
        for _ in range(4):
            await rounds.next()
        await loop.stop()
    records = [r for r in caplog.records if r.name == LOGGER.name]
    assert [r.exc_info is not None for r in records] == [True, False, False, False]
    assert "failed again (3 in a row): ConnectionResetError" in records[2].getMessage()
    assert records[-1].getMessage() == "looking for unsent boards works again, after 3 failures"
