"""Backoff's delays, and retry: each failure logged with what it concerns, then waited out."""

from __future__ import annotations

import logging

import pytest

from telesnap.support.retry import Backoff, retry

LOGGER = logging.getLogger("tests.retry")


def test_the_delays_double_from_the_first_up_to_the_cap() -> None:
    backoff = Backoff(0.1, 30.0)
    delays = [backoff.next() for _ in range(12)]
    assert delays[:4] == [0.1, 0.2, 0.4, 0.8]
    assert delays[-1] == 30.0
    assert max(delays) == 30.0
    assert delays == sorted(delays)


def test_a_success_starts_the_delays_again_from_the_first() -> None:
    backoff = Backoff(5.0, 60.0)
    assert [backoff.next() for _ in range(3)] == [5.0, 10.0, 20.0]
    backoff.reset()
    assert backoff.next() == 5.0


def test_a_count_of_failures_far_beyond_the_cap_waits_the_cap() -> None:
    assert Backoff(0.5, 30.0).delay(10_000) == 30.0
    assert Backoff(0.0, 1.0).delay(50) == 0.0


def test_a_first_delay_above_the_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and its cap"):
        Backoff(2.0, 1.0)


async def test_retry_logs_each_failure_waits_the_backoff_and_returns_the_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outcomes: list[Exception | str] = [OSError("down"), OSError("still down"), "done"]
    waited: list[float] = []
    told: list[int] = []

    async def attempt() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    async def after_failure() -> None:
        told.append(len(waited))

    backoff = Backoff(1.0, 30.0)
    with caplog.at_level(logging.INFO, logger=LOGGER.name):
        result = await retry(
            attempt,
            backoff,
            logger=LOGGER,
            what="deciding race 7",
            after_failure=after_failure,
            sleep=sleep,
        )
    assert result == "done"
    assert waited == [1.0, 2.0]
    assert told == [0, 1], "told after each failure, before its wait"
    assert [r.getMessage() for r in caplog.records] == [
        "deciding race 7 failed (OSError: down); retrying in 1.0 s",
        "deciding race 7 failed (OSError: still down); retrying in 2.0 s",
        "deciding race 7 works again, after 2 failures",
    ]
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == ["down", "still down"]
    assert backoff.failures == 0, "the success reset the backoff"
