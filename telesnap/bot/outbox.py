"""Sending within Telegram's flood limits, and never losing a message.

Every message and edit goes through one lane per chat. A lane sends in
order, waits for a free slot in the chat's rolling window (about 20 per
minute in a group, 1 per second in a private chat) and in the bot-wide one
(30 per second), waits out a 429's ``retry_after``, and retries network
failures and server errors with backoff.

While a board message waits for its slot, newer boards of the same game are
merged into it: the waiting message gains the new event lines and shows the
newest table. So a fast game is shown in fewer messages, but every flip,
snap and penalty still appears in one of them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from telegram import Bot
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

logger = logging.getLogger(__name__)

_MAX_BACKOFF_S = 30.0


@dataclass(frozen=True)
class FloodLimits:
    """How many messages (and edits) may go out per rolling window."""

    group_messages: int = 20
    group_window_s: float = 61.0  # a second of margin over Telegram's minute
    private_messages: int = 1
    private_window_s: float = 1.05
    bot_messages: int = 30
    bot_window_s: float = 1.0
    enabled: bool = True


class RollingWindow:
    """At most ``count`` events in any ``window_s`` seconds."""

    def __init__(self, count: int, window_s: float, clock: Callable[[], float]) -> None:
        self._count = count
        self._window_s = window_s
        self._clock = clock
        self._times: deque[float] = deque()

    def delay(self) -> float:
        """Seconds to wait before the next event fits (0 if it fits now)."""
        now = self._clock()
        self._forget_before(now - self._window_s)
        if len(self._times) < self._count:
            return 0.0
        return self._times[0] + self._window_s - now

    def record(self) -> None:
        """Count an event now."""
        self._times.append(self._clock())

    def is_quiet(self) -> bool:
        """Whether no event is left in the window (forgetting it loses nothing)."""
        self._forget_before(self._clock() - self._window_s)
        return not self._times

    def _forget_before(self, moment: float) -> None:
        while self._times and self._times[0] <= moment:
            self._times.popleft()


class Post(Protocol):
    """Something to send: a message or an edit, possibly able to absorb a newer one."""

    key: str | None
    """Waiting posts with the same key may merge (None: never)."""

    async def send(self, bot: Bot) -> Any:
        """Make the API call; return its result."""

    def absorb(self, newer: Post) -> bool:
        """Merge a newer post into this waiting one; False if it cannot."""


@dataclass(eq=False)
class _Queued:
    post: Post
    future: asyncio.Future[Any]
    in_flight: bool = False


@dataclass(eq=False)
class _Lane:
    items: deque[_Queued] = field(default_factory=deque)
    window: RollingWindow | None = None
    worker: asyncio.Task[None] | None = None

    def is_idle(self) -> bool:
        """Nothing to send, nothing sending, and no recent message to count."""
        busy = self.items or (self.worker is not None and not self.worker.done())
        return not busy and (self.window is None or self.window.is_quiet())


class Outbox:
    """The per-chat lanes that every message and edit of the bot goes through."""

    def __init__(
        self,
        bot: Bot,
        limits: FloodLimits,
        clock: Callable[[], float] = time.monotonic,
        on_forbidden: Callable[[int], None] | None = None,
    ) -> None:
        """``on_forbidden`` is called with the chat id when Telegram answers 403 there."""
        self._bot = bot
        self._on_forbidden = on_forbidden
        self._limits = limits
        self._clock = clock
        self._lanes: dict[int, _Lane] = {}
        self._last_sweep = clock()
        self._bot_window = RollingWindow(limits.bot_messages, limits.bot_window_s, clock)

    @property
    def lane_count(self) -> int:
        """How many chats have a lane (busy ones, and idle ones not swept yet)."""
        return len(self._lanes)

    def _lane(self, chat_id: int) -> _Lane:
        lane = self._lanes.get(chat_id)
        if lane is None:
            if self._clock() - self._last_sweep >= self._limits.group_window_s:
                self._sweep()
            limits = self._limits
            group = chat_id < 0
            lane = self._lanes[chat_id] = _Lane(
                window=RollingWindow(
                    limits.group_messages if group else limits.private_messages,
                    limits.group_window_s if group else limits.private_window_s,
                    self._clock,
                )
            )
        return lane

    def submit(self, chat_id: int, post: Post) -> asyncio.Future[Any]:
        """Queue a post for ``chat_id``; a waiting post with the same key may absorb it.

        The future resolves to the API result when the call has gone through
        (or to the exception of a call Telegram refuses for good).
        """
        lane = self._lane(chat_id)
        if post.key is not None:
            for waiting in lane.items:
                same = waiting.post.key == post.key and not waiting.in_flight
                if same and waiting.post.absorb(post):
                    return waiting.future
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        lane.items.append(_Queued(post, future))
        if lane.worker is None or lane.worker.done():
            lane.worker = asyncio.create_task(self._drain(chat_id, lane))
        return future

    def _sweep(self) -> None:
        """Drop the lanes of idle chats, so chats seen once do not stay for ever."""
        # At most once per group window, when a new chat needs a lane: by then the
        # lanes of chats that went quiet before the last sweep count nothing.
        self._lanes = {chat_id: lane for chat_id, lane in self._lanes.items() if not lane.is_idle()}
        self._last_sweep = self._clock()

    async def _wait_for_slot(self, lane: _Lane) -> None:
        if not self._limits.enabled:
            return
        assert lane.window is not None
        # The windows only free up as time passes, so there is no event to wait for.
        while (delay := max(lane.window.delay(), self._bot_window.delay())) > 0:  # noqa: ASYNC110
            await asyncio.sleep(delay)
        lane.window.record()
        self._bot_window.record()

    async def _drain(self, chat_id: int, lane: _Lane) -> None:
        failures = 0
        while lane.items:
            item = lane.items[0]
            await self._wait_for_slot(lane)
            item.in_flight = True
            try:
                result = await item.post.send(self._bot)
            except RetryAfter as error:
                item.in_flight = False
                delay = error.retry_after
                seconds = delay if isinstance(delay, int | float) else delay.total_seconds()
                logger.warning("chat %s: flood control, waiting %.1f s", chat_id, seconds)
                await asyncio.sleep(seconds)
                continue
            except Forbidden as error:
                logger.warning("chat %s: the bot cannot post here (%s)", chat_id, error)
                self._fail_all(lane, error)
                if self._on_forbidden is not None:
                    self._on_forbidden(chat_id)
                return
            except BadRequest as error:
                if "not modified" in str(error).lower():
                    result = True
                else:
                    logger.error("chat %s: Telegram refused a message: %s", chat_id, error)
                    lane.items.popleft()
                    if not item.future.done():
                        item.future.set_exception(error)
                    continue
            except TelegramError as error:
                item.in_flight = False
                failures += 1
                delay = min(_MAX_BACKOFF_S, 0.5 * 2 ** min(failures, 6))
                logger.warning("chat %s: %s; retrying in %.1f s", chat_id, error, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            lane.items.popleft()
            if not item.future.done():
                item.future.set_result(result)

    @staticmethod
    def _fail_all(lane: _Lane, error: Exception) -> None:
        while lane.items:
            item = lane.items.popleft()
            if not item.future.done():
                item.future.set_exception(error)

    async def flush(self) -> None:
        """Wait until every lane has sent what it holds."""
        while True:
            workers = [lane.worker for lane in self._lanes.values() if lane.worker]
            pending = [worker for worker in workers if not worker.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    async def close(self) -> None:
        """Stop every lane now (what is still queued is dropped)."""
        workers = [lane.worker for lane in self._lanes.values() if lane.worker]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._lanes.clear()
