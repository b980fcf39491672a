"""Toasts: retried on 5xx, 429 and dropped connections while the press can be answered."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut

import telesnap.app  # noqa: F401  (opts in to python-telegram-bot's timedelta durations, as the bot does)
from telesnap.bot.handlers import buttons
from telesnap.bot.render.toasts import ANSWER_MARGIN_S, QUERY_LIFETIME_S, answer_toast
from telesnap.services.types import Receipt

SECOND_NS = 1_000_000_000


class FlakyBot:
    """Fails the first answers as planned (then answers), on a clock it shares with the test."""

    def __init__(self, failures: list[Exception], now: list[int]) -> None:
        self.failures = failures
        self.tries: list[int] = []
        self.answers: list[tuple[str, str | None]] = []
        self._now = now

    async def answer_callback_query(self, query_id: str, text: str | None) -> bool:
        self.tries.append(self._now[0])
        if self.failures:
            raise self.failures.pop(0)
        self.answers.append((query_id, text))
        return True


def clock() -> tuple[list[int], Any, Any]:
    now = [100 * SECOND_NS]

    async def sleep(seconds: float) -> None:
        now[0] += int(seconds * SECOND_NS)

    return now, (lambda: now[0]), sleep


@pytest.mark.parametrize(
    "failure",
    [
        NetworkError("Internal Server Error (500)"),
        NetworkError("Bad Gateway"),
        RetryAfter(timedelta(seconds=2)),
        TimedOut(),
        NetworkError("aiohttp.ServerDisconnectedError: Server disconnected"),
    ],
    ids=["500", "502", "429", "timeout", "dropped"],
)
async def test_a_failed_answer_is_retried_until_it_gets_through(failure: Exception) -> None:
    now, clock_ns, sleep = clock()
    bot = FlakyBot([failure, failure], now)
    answered = await answer_toast(
        bot,  # type: ignore[arg-type]
        "q1",
        "Too late!",
        received_ns=now[0],
        clock_ns=clock_ns,
        sleep=sleep,
    )
    assert answered
    assert bot.answers == [("q1", "Too late!")]
    assert len(bot.tries) == 3


async def test_a_429_is_waited_out_as_asked() -> None:
    now, clock_ns, sleep = clock()
    bot = FlakyBot([RetryAfter(timedelta(seconds=3))], now)
    start = now[0]
    await answer_toast(bot, "q1", "ok", received_ns=start, clock_ns=clock_ns, sleep=sleep)  # type: ignore[arg-type]
    assert bot.tries[1] - bot.tries[0] == 3 * SECOND_NS


async def test_retries_stop_before_the_press_expires(caplog: pytest.LogCaptureFixture) -> None:
    now, clock_ns, sleep = clock()
    bot = FlakyBot([NetworkError("Bad Gateway")] * 1000, now)
    pressed = now[0] - 2 * SECOND_NS  # the press reached the bot two seconds ago
    answered = await answer_toast(
        bot,  # type: ignore[arg-type]
        "q1",
        "ok",
        received_ns=pressed,
        clock_ns=clock_ns,
        sleep=sleep,
    )
    assert not answered
    assert len(bot.tries) > 3
    assert max(bot.tries) <= pressed + (QUERY_LIFETIME_S - ANSWER_MARGIN_S) * SECOND_NS
    assert "gave up" in caplog.text


async def test_a_refused_answer_is_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    now, clock_ns, sleep = clock()
    bot = FlakyBot([BadRequest("Query is too old and response timeout expired")], now)
    answered = await answer_toast(bot, "q1", "ok", clock_ns=clock_ns, sleep=sleep)  # type: ignore[arg-type]
    assert not answered
    assert len(bot.tries) == 1
    assert "too old" in caplog.text


async def test_a_buttons_answer_is_tried_until_3_s_before_its_press_expires(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The button handlers answer with the press's receipt, so five 2 s 429s still get through."""
    now, clock_ns, sleep = clock()
    received = now[0]  # handled at once, as a press usually is
    bot = FlakyBot([RetryAfter(timedelta(seconds=2)) for _ in range(5)], now)

    async def on_the_test_clock(*args: Any, **kwargs: Any) -> bool:
        return await answer_toast(*args, **kwargs, clock_ns=clock_ns, sleep=sleep)

    monkeypatch.setattr(buttons, "answer_toast", on_the_test_clock)
    query = SimpleNamespace(id="q1", get_bot=lambda: bot)
    await buttons.answer_press(query, "You joined the game.", Receipt.at(received, 1, "host"))  # type: ignore[arg-type]
    assert bot.answers == [("q1", "You joined the game.")]
    assert bot.tries[-1] - received == 10 * SECOND_NS
