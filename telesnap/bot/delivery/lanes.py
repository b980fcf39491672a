"""Sending within Telegram's flood limits, at a steady pace, and never losing a message.

Every message, edit and deletion goes through one lane per chat. A lane sends
in order, waits for a free slot in the chat's rolling window (about 20 per
minute in a group, 1 per second in a private chat) and in the bot-wide one
(30 per second), waits out a 429's ``retry_after``, and retries network
failures and server errors with backoff.

**Pace.** A group gets a small burst (``group_burst`` messages) at once; after
that its messages are spread evenly over the window, one every
``group_window_s / (group_messages - group_burst)`` seconds (about 3.6 s), so a
fast game shows a board every few seconds instead of 20 boards in a few
seconds and then nothing for most of a minute. A token bucket of
``group_burst`` tokens refilled at that rate can never exceed the window's
count, whatever the traffic.

**Margin.** A send counts in a window from the moment its answer came back (and
while it is on its way, as taking a slot): Telegram counts it somewhere in
between, so two sends the bot spaced a window apart are a window apart for
Telegram too, however long each took on the wire.

**Coalescing.** While a board message waits for its slot, newer boards of the
same game are merged into it: the waiting message gains the new event lines
and shows the newest table. A board always merges into the newest waiting
post of its game, and a board whose send failed takes in the boards queued
behind it, so boards never go out of order. So a fast game is shown in fewer
messages, but every flip, snap and penalty still appears in one of them.

**Next in line.** A post submitted with :meth:`Outbox.submit_next` (tidying:
taking the buttons off the board a new one replaced) goes right behind the
post being sent, ahead of those waiting: it takes the next slot of the pace,
so the chat's older boards lose their buttons as fast as new ones come, and it
counts in the windows like any other.

**Across workers.** The windows and the pace live in :mod:`.slots`: in the
process (:class:`~.slots.MemorySlots`), or in the database that several workers
share (:class:`~.slots.StoredSlots`), so they count every worker's messages.

**Failures stay local.** A post Telegram refuses for good fails its own future
(logged with the chat); a 403 (the bot was removed) fails the chat's lane and
is reported to ``on_forbidden``; any other exception of a send is logged with
the chat and the post and fails that post only. The lane goes on. Failed
futures are marked retrieved, since the outbox logs every failure itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from telegram import Bot
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from ...support.retry import Backoff
from .slots import FloodLimits, MemorySlots, Slots

__all__ = ["OWN_FAULT_ATTEMPTS", "FloodLimits", "Outbox", "Post"]

logger = logging.getLogger(__name__)

_SEND_RETRY_S = (1.0, 30.0)
"""A failed send is tried again after 1 s, then twice as long each time, up to 30 s."""
_SLOTS_RETRY_S = 1.0
OWN_FAULT_ATTEMPTS = 3
"""How often a post whose sending raises an error of our own is tried before it is set aside."""


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
    ahead: bool = False
    """Submitted next in line (:meth:`Outbox.submit_next`): later ones go behind it."""
    own_faults: int = 0
    """How often sending it raised an error that is not Telegram's."""
    followers: list[asyncio.Future[Any]] = field(default_factory=list)
    """Futures of posts folded into this one after it failed once: they share its result."""

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        for future in (self.future, *self.followers):
            if future.done():
                continue
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)


@dataclass(eq=False)
class _Lane:
    items: deque[_Queued] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    emptied: asyncio.Event = field(default_factory=asyncio.Event)

    def is_idle(self) -> bool:
        """Nothing to send and nothing sending."""
        return not (self.items or (self.worker is not None and not self.worker.done()))

    def newest_with_key(self, key: str) -> _Queued | None:
        return next((item for item in reversed(self.items) if item.post.key == key), None)

    def fold_into(self, item: _Queued) -> None:
        """Merge the waiting posts with ``item``'s key into ``item`` (it failed and waits again)."""
        key = item.post.key
        if key is None:
            return
        for later in [queued for queued in self.items if queued is not item]:
            if later.post.key != key:
                continue
            if not item.post.absorb(later.post):
                return  # full: the rest must go out after ``later``, in their order
            self.items.remove(later)
            item.followers += [later.future, *later.followers]


def _observed(future: asyncio.Future[Any]) -> None:
    # The outbox logs every failure itself: a caller that does not wait for the
    # result must not leave "Future exception was never retrieved" behind.
    if not future.cancelled():
        future.exception()


class Outbox:
    """The per-chat lanes that every message and edit of the bot goes through."""

    def __init__(
        self,
        bot: Bot,
        limits: FloodLimits,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_forbidden: Callable[[int], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        slots: Slots | None = None,
    ) -> None:
        """Send through ``bot``; ``on_forbidden(chat_id)`` hears when a chat answers 403.

        ``slots`` keeps the flood-limit windows (by default in this process, on
        ``clock``). ``clock`` and ``sleep`` let tests move time by hand.
        """
        self._bot = bot
        self._limits = limits
        self._clock = clock
        self._sleep = sleep
        self._on_forbidden = on_forbidden
        self._lanes: dict[int, _Lane] = {}
        self._last_sweep = clock()
        self._slots = slots if slots is not None else MemorySlots(limits, clock)

    @property
    def lane_count(self) -> int:
        """How many chats have a lane (busy ones, and idle ones not swept yet)."""
        return len(self._lanes)

    def _lane(self, chat_id: int) -> _Lane:
        lane = self._lanes.get(chat_id)
        if lane is None:
            if self._clock() - self._last_sweep >= self._limits.group_window_s:
                self._sweep()
            lane = self._lanes[chat_id] = _Lane()
        return lane

    def submit(self, chat_id: int, post: Post) -> asyncio.Future[Any]:
        """Queue a post for ``chat_id``; the newest waiting post with its key may absorb it.

        The future resolves to the API result when the call has gone through
        (or to the exception of a call that failed for good, already logged).
        """
        lane = self._lane(chat_id)
        if post.key is not None:
            newest = lane.newest_with_key(post.key)
            if newest is not None and not newest.in_flight and newest.post.absorb(post):
                return newest.future
        return self._queue(chat_id, lane, post, len(lane.items))

    def submit_next(self, chat_id: int, post: Post) -> asyncio.Future[Any]:
        """Queue a post right behind the one being sent, ahead of those waiting (see above).

        Posts submitted next one after another keep their order.
        """
        lane = self._lane(chat_id)
        place = 1 if lane.items and lane.items[0].in_flight else 0
        while place < len(lane.items) and lane.items[place].ahead:
            place += 1
        return self._queue(chat_id, lane, post, place, ahead=True)

    def _queue(
        self, chat_id: int, lane: _Lane, post: Post, place: int, *, ahead: bool = False
    ) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_observed)
        lane.items.insert(place, _Queued(post, future, ahead=ahead))
        lane.emptied.clear()
        self._start(chat_id, lane)
        return future

    def _start(self, chat_id: int, lane: _Lane) -> None:
        if lane.worker is None or lane.worker.done():
            lane.worker = asyncio.create_task(self._drain(chat_id, lane))

    def _sweep(self) -> None:
        """Drop the lanes of idle chats, so chats seen once do not stay for ever."""
        # At most once per group window, when a new chat needs a lane: by then the
        # lanes of chats that went quiet before the last sweep count nothing.
        self._lanes = {
            chat_id: lane
            for chat_id, lane in self._lanes.items()
            if not (lane.is_idle() and self._slots.forget_if_quiet(chat_id))
        }
        self._last_sweep = self._clock()

    async def _wait_for_slot(self, chat_id: int) -> None:
        # The windows only free up as time passes, so there is no event to wait for.
        while (delay := await self._reserve(chat_id)) > 0:
            await self._sleep(delay)

    async def _reserve(self, chat_id: int) -> float:
        """Take a slot now (0) or say how long to wait; a slot that cannot be counted waits."""
        if not self._limits.enabled:
            return 0.0
        try:
            return await self._slots.reserve(chat_id)
        except Exception:
            # Sending uncounted could break the limits for every worker: wait and ask again.
            logger.exception("chat %s: the flood-limit windows cannot be read; waiting", chat_id)
            return _SLOTS_RETRY_S

    async def _sent(self, chat_id: int) -> None:
        if not self._limits.enabled:
            return
        try:
            await self._slots.finish(chat_id)
        except Exception:
            # The slot stays taken until it is stale: the windows only err on the safe side.
            logger.exception("chat %s: ending a send in the flood-limit windows failed", chat_id)

    async def _drain(self, chat_id: int, lane: _Lane) -> None:
        backoff = Backoff(*_SEND_RETRY_S)
        while lane.items:
            item = lane.items[0]
            await self._wait_for_slot(chat_id)
            item.in_flight = True
            try:
                try:
                    result = await item.post.send(self._bot)
                finally:
                    await self._sent(chat_id)
            except RetryAfter as error:
                after = error.retry_after
                seconds = after if isinstance(after, int | float) else after.total_seconds()
                logger.warning("chat %s: flood control, waiting %.1f s", chat_id, seconds)
                self._wait_again(lane, item)
                await self._sleep(seconds)
                continue
            except Forbidden as error:
                logger.warning("chat %s: the bot cannot post here (%s)", chat_id, error)
                self._fail_all(lane, error)
                self._report_forbidden(chat_id)
                return
            except BadRequest as error:
                if "not modified" in str(error).lower():
                    result = True
                else:
                    logger.error("chat %s: Telegram refused %s: %s", chat_id, _what(item), error)
                    lane.items.popleft()
                    item.settle(error=error)
                    continue
            except TelegramError as error:
                delay = backoff.next()
                logger.warning(
                    "chat %s: sending %s failed (%s); retrying in %.1f s",
                    chat_id,
                    _what(item),
                    error,
                    delay,
                )
                self._wait_again(lane, item)
                await self._sleep(delay)
                continue
            except Exception as error:
                # Not Telegram's answer but a fault of our own (building the text, the
                # transport): tried again a few times in case it passes, then it fails
                # alone, and the lane goes on.
                item.own_faults += 1
                if item.own_faults < OWN_FAULT_ATTEMPTS:
                    delay = Backoff(*_SEND_RETRY_S).delay(item.own_faults)
                    logger.exception(
                        "chat %s: sending %s failed; retrying in %.1f s",
                        chat_id,
                        _what(item),
                        delay,
                    )
                    self._wait_again(lane, item)
                    await self._sleep(delay)
                    continue
                logger.exception(
                    "chat %s: sending %s failed %d times; set aside",
                    chat_id,
                    _what(item),
                    item.own_faults,
                )
                lane.items.popleft()
                item.settle(error=error)
                continue
            backoff.reset()
            lane.items.popleft()
            item.settle(result)
        lane.emptied.set()

    @staticmethod
    def _wait_again(lane: _Lane, item: _Queued) -> None:
        item.in_flight = False
        lane.fold_into(item)

    def _report_forbidden(self, chat_id: int) -> None:
        if self._on_forbidden is None:
            return
        try:
            self._on_forbidden(chat_id)
        except Exception:
            logger.exception("chat %s: handling the bot's removal failed", chat_id)

    @staticmethod
    def _fail_all(lane: _Lane, error: Exception) -> None:
        while lane.items:
            lane.items.popleft().settle(error=error)
        lane.emptied.set()

    async def flush(self) -> None:
        """Wait until every lane has sent what it holds."""
        while busy := [
            lane
            for lane in self._lanes.values()
            if lane.items and lane.worker is not None and not lane.worker.done()
        ]:
            await asyncio.gather(*(lane.emptied.wait() for lane in busy))

    async def close(self) -> None:
        """Stop every lane now (what is still queued is dropped)."""
        workers = [lane.worker for lane in self._lanes.values() if lane.worker]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._lanes.clear()


def _what(item: _Queued) -> str:
    """The post named in a log line: its key (``board:<game id>``) or its kind."""
    return item.post.key or type(item.post).__name__
