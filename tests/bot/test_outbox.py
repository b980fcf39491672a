"""The outbox: failures stay with their post, boards keep their order, the pace is even."""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
from typing import Any

import pytest
from telegram.error import Forbidden, NetworkError

from telesnap.bot.delivery.lanes import OWN_FAULT_ATTEMPTS, FloodLimits, Outbox, Post

GROUP = -500
GUARD_S = 10.0
"""A failure guard: how long a test waits for a future that should settle at once."""


class BoardLike:
    """A post of game 1 that shows the boards (versions) it was given, newest last."""

    key: str | None = "board:1"

    def __init__(self, version: int) -> None:
        self.versions = [version]

    async def send(self, bot: Any) -> Any:
        return await bot.deliver(self)

    def absorb(self, newer: Post) -> bool:
        if not isinstance(newer, BoardLike):
            return False
        self.versions += newer.versions
        return True


class Plain:
    """A message that never merges."""

    key: str | None = None

    def __init__(self, text: str) -> None:
        self.text = text

    async def send(self, bot: Any) -> Any:
        return await bot.deliver(self)

    def absorb(self, newer: Post) -> bool:
        return False


class Broken(Plain):
    """A post whose sending raises an error of our own (not Telegram's), ``times`` times."""

    def __init__(self, text: str, times: int = 1_000) -> None:
        super().__init__(text)
        self.times = times
        self.attempts = 0

    async def send(self, bot: Any) -> Any:
        self.attempts += 1
        if self.attempts <= self.times:
            raise ValueError("a bug while building the message")
        return await super().send(bot)


async def no_wait(seconds: float) -> None:
    """A backoff that returns at once (the tests do not wait out real delays)."""
    await asyncio.sleep(0)


class RecordingBot:
    """Delivers every post, recording what was sent (and, with a clock, when)."""

    def __init__(self, clock: list[float] | None = None) -> None:
        self.sent: list[Any] = []
        self.times: list[float] = []
        self._clock = clock

    async def deliver(self, post: Any) -> int:
        self.sent.append(list(post.versions) if isinstance(post, BoardLike) else post.text)
        if self._clock is not None:
            self.times.append(self._clock[0])
        return len(self.sent)


class FirstSendHeldThenFails(RecordingBot):
    """The first send is held until released, then fails as a 500 would."""

    def __init__(self) -> None:
        super().__init__()
        self.held = asyncio.Event()
        self.release = asyncio.Event()
        self._first = True

    async def deliver(self, post: Any) -> int:
        if self._first:
            self._first = False
            self.held.set()
            await self.release.wait()
            raise NetworkError("Internal Server Error (500)")
        return await super().deliver(post)


class ForbiddenBot:
    """A chat the bot was removed from."""

    async def deliver(self, post: Any) -> int:
        raise Forbidden("Forbidden: bot was kicked from the group chat")


class ManualSleep:
    """A sleep that returns only when the test says so."""

    def __init__(self) -> None:
        self.sleeping = asyncio.Event()
        self.wake = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.sleeping.set()
        await self.wake.wait()
        self.wake.clear()
        self.sleeping.clear()


async def settled(future: asyncio.Future[Any]) -> Any:
    async with asyncio.timeout(GUARD_S):
        return await future


async def test_an_error_of_our_own_fails_that_post_only_and_the_lane_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = RecordingBot()
    outbox = Outbox(bot, FloodLimits(enabled=False), sleep=no_wait)  # type: ignore[arg-type]
    post = Broken("first")
    broken = outbox.submit(GROUP, post)
    after = outbox.submit(GROUP, Plain("second"))
    with pytest.raises(ValueError, match="a bug"):
        await settled(broken)
    assert post.attempts == OWN_FAULT_ATTEMPTS
    assert await settled(after) == 1
    assert bot.sent == ["second"]
    later = outbox.submit(GROUP, Plain("third"))
    assert await settled(later) == 2
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(str(GROUP) in r.getMessage() and r.exc_info for r in failures)
    assert any("set aside" in r.getMessage() for r in failures)
    await outbox.close()


async def test_a_post_whose_error_of_our_own_passes_is_sent_on_a_later_try() -> None:
    bot = RecordingBot()
    outbox = Outbox(bot, FloodLimits(enabled=False), sleep=no_wait)  # type: ignore[arg-type]
    first = outbox.submit(GROUP, Broken("first", times=1))
    second = outbox.submit(GROUP, Plain("second"))
    assert await settled(first) == 1
    assert await settled(second) == 2
    assert bot.sent == ["first", "second"], "sent once it passed, and in order"
    await outbox.close()


async def test_a_board_queued_during_a_slow_failed_send_goes_out_with_it_in_order() -> None:
    bot = FirstSendHeldThenFails()
    sleep = ManualSleep()
    outbox = Outbox(bot, FloodLimits(enabled=False), sleep=sleep)  # type: ignore[arg-type]
    first = outbox.submit(GROUP, BoardLike(1))
    await settled(asyncio.ensure_future(bot.held.wait()))
    second = outbox.submit(GROUP, BoardLike(2))  # queued while the first is on its way
    bot.release.set()  # ... which then fails with a 500
    await settled(asyncio.ensure_future(sleep.sleeping.wait()))
    third = outbox.submit(GROUP, BoardLike(3))  # queued while the lane backs off
    sleep.wake.set()
    results = [await settled(future) for future in (first, second, third)]
    shown = list(itertools.chain.from_iterable(bot.sent))
    assert shown == [1, 2, 3], "every board shown once, oldest first"
    assert bot.sent[-1][-1] == 3, "the chat's last message shows the newest table"
    assert len(set(results)) == len(bot.sent)
    await outbox.close()


async def test_a_403_fails_the_lane_reports_the_chat_and_leaves_no_unretrieved_future(
    caplog: pytest.LogCaptureFixture,
) -> None:
    removed: list[int] = []
    outbox = Outbox(
        ForbiddenBot(),  # type: ignore[arg-type]
        FloodLimits(enabled=False),
        on_forbidden=removed.append,
    )
    waited = outbox.submit(GROUP, Plain("seen"))
    outbox.submit(GROUP, Plain("fire and forget"))
    with pytest.raises(Forbidden):
        await settled(waited)
    await outbox.flush()
    del waited
    gc.collect()
    await asyncio.sleep(0)  # let the loop report what the collection found
    assert removed == [GROUP]
    assert "never retrieved" not in caplog.text
    await outbox.close()


async def test_failed_posts_nobody_waits_for_leave_no_unretrieved_future(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outbox = Outbox(ForbiddenBot(), FloodLimits(enabled=False))  # type: ignore[arg-type]
    outbox.submit(GROUP, Plain("one"))
    outbox.submit(GROUP, Plain("two"))
    await outbox.flush()
    gc.collect()
    await asyncio.sleep(0)
    assert "never retrieved" not in caplog.text
    assert "cannot post" in caplog.text
    await outbox.close()


def paced_outbox(limits: FloodLimits) -> tuple[Outbox, RecordingBot, list[float]]:
    """An outbox on a clock that moves only when the outbox sleeps."""
    now = [0.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds
        await asyncio.sleep(0)

    bot = RecordingBot(now)
    outbox = Outbox(bot, limits, clock=lambda: now[0], sleep=sleep)  # type: ignore[arg-type]
    return outbox, bot, now


async def test_a_busy_group_gets_a_small_burst_then_an_even_pace() -> None:
    limits = FloodLimits()
    outbox, bot, _ = paced_outbox(limits)
    for index in range(45):
        outbox.submit(GROUP, Plain(f"message {index}"))
    await outbox.flush()
    assert len(bot.sent) == 45
    times = bot.times
    assert times[: limits.group_burst] == [0.0] * limits.group_burst
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    steady = gaps[limits.group_burst - 1 :]
    assert max(steady) == pytest.approx(limits.group_interval_s)
    assert min(steady) == pytest.approx(limits.group_interval_s)
    assert 3.0 <= limits.group_interval_s <= 4.0
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.group_window_s]
        assert len(inside) <= limits.group_messages, "never over the group's window"
    await outbox.close()


async def test_a_group_that_plays_slowly_is_never_held_back() -> None:
    limits = FloodLimits()
    outbox, bot, now = paced_outbox(limits)
    for index in range(10):
        await settled(outbox.submit(GROUP, Plain(f"message {index}")))
        now[0] += limits.group_interval_s  # a flip every few seconds
    assert bot.times == pytest.approx([index * limits.group_interval_s for index in range(10)])
    await outbox.close()


async def test_the_whole_bot_stays_under_its_window_across_many_chats() -> None:
    limits = FloodLimits()
    outbox, bot, _ = paced_outbox(limits)
    for chat in range(75):
        outbox.submit(-1000 - chat, Plain(f"chat {chat}"))
    await outbox.flush()
    times = bot.times
    assert len(times) == 75
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.bot_window_s]
        assert len(inside) <= limits.bot_messages
    assert max(times) <= 2 * limits.bot_window_s + 1e-9, "and no slower than the window needs"
    await outbox.close()


class ShownThenTidied(Plain):
    """A board that, once sent, queues the removal of an older board's buttons next in line."""

    def __init__(self, text: str, outbox: Outbox, removals: list[str]) -> None:
        super().__init__(text)
        self.outbox = outbox
        self.removals = removals

    async def send(self, bot: Any) -> Any:
        result = await super().send(bot)
        for removal in self.removals:
            self.outbox.submit_next(GROUP, Plain(removal))
        return result


async def test_a_post_queued_next_goes_right_behind_the_one_being_sent() -> None:
    limits = FloodLimits()
    interval = limits.group_interval_s
    outbox, bot, _ = paced_outbox(limits)
    outbox.submit(GROUP, Plain("board 1"))
    outbox.submit(GROUP, Plain("board 2"))
    outbox.submit(GROUP, ShownThenTidied("board 3", outbox, ["untidy 1", "untidy 2"]))
    outbox.submit(GROUP, Plain("board 4"))
    outbox.submit(GROUP, Plain("board 5"))
    await outbox.flush()
    tidied = ["untidy 1", "untidy 2"]
    assert bot.sent == ["board 1", "board 2", "board 3", *tidied, "board 4", "board 5"]
    # Counted in the pace like any message: nothing goes faster than the burst and the pace.
    assert bot.times == pytest.approx([0, 0, 0, interval, 2 * interval, 3 * interval, 4 * interval])
    await outbox.close()


async def test_a_post_queued_next_in_an_idle_chat_goes_at_once() -> None:
    outbox, bot, _ = paced_outbox(FloodLimits())
    await settled(outbox.submit_next(GROUP, Plain("untidy")))
    assert bot.sent == ["untidy"]
    await outbox.close()
