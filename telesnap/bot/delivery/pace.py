"""Keeping within Telegram's flood limits, at a steady pace: a slot before every send.

A send counts from when Telegram's answer came back: Telegram counts it somewhere in between,
so sends spaced a window apart here are a window apart there too. A group's messages are spread
evenly after a small burst (:class:`Pace`), so a fast game shows a board every few seconds, not
20 at once and then nothing for most of a minute. With several workers a chat's windows are
shared and changed by compare-and-swap, so workers posting to one group stay within its limit
together; each worker keeps an even share of the bot-wide limit.
"""

from __future__ import annotations

import asyncio
import bisect
import copy
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...coordination import Coordination
from ...support.retry import FailureRun, short_cause

logger = logging.getLogger(__name__)

_IN_FLIGHT_POLL_S = 0.02
"""How often to look again when every slot is taken by a send still on its way."""

STALE_SEND_S = 60.0
"""A send still "on its way" after this long was lost with its worker: it stops holding a slot."""


class RollingWindow:
    """At most ``count`` sends in any ``window_s`` seconds, counted from when each ended.

    A send whose worker died never ends: its slot is freed ``STALE_SEND_S`` after it began.

    >>> now = [0.0]
    >>> window = RollingWindow(1, 1.0, lambda: now[0])
    >>> begun = window.begin(); window.delay() > 0
    True
    >>> now[0] = 5.0; window.end(begun); window.delay()
    1.0
    >>> now[0] = 6.0; window.delay()
    0.0
    """

    def __init__(
        self,
        count: int,
        window_s: float,
        clock: Callable[[], float],
        state: dict[str, Any] | None = None,
    ) -> None:
        """Count up to ``count`` sends per ``window_s``; ``state`` continues a saved window."""
        self._count = count
        self._window_s = window_s
        self._clock = clock
        state = state or {}
        self._ended: list[float] = sorted(float(t) for t in state.get("ended", ()))
        self._open: list[float] = [float(t) for t in state.get("open", ())]
        """When each send still on its way began, oldest first."""

    def state(self) -> dict[str, Any]:
        """The window as JSON (the sends it still counts), to continue it elsewhere."""
        return {"ended": list(self._ended), "open": list(self._open)}

    def delay(self) -> float:
        """Seconds to wait before the next send fits (0 if it fits now)."""
        now = self._clock()
        self._forget_before(now - self._window_s)
        excess = len(self._open) + len(self._ended) - self._count
        if excess < 0:
            return 0.0
        if excess < len(self._ended):
            return max(self._ended[excess] + self._window_s - now, 1e-3)
        return _IN_FLIGHT_POLL_S  # every slot is held by a send still on its way

    def begin(self) -> float:
        """A send starts: it holds a slot until it ends; return when it began (for :meth:`end`)."""
        begun = self._clock()
        self._open.append(begun)
        return begun

    def end(self, begun: float | None) -> None:
        """The send that began at ``begun`` has ended now (None: not known, none is closed).

        Only its own slot closes: closing the oldest instead would close a dead worker's send in its
        place and keep a slot taken for good. A send dropped as stale counts from now.
        """
        if begun is not None and begun in self._open:
            self._open.remove(begun)
        bisect.insort(self._ended, self._clock())

    def give_back(self, begun: float) -> None:
        """The send that took a slot at ``begun`` will not happen: its slot is free again."""
        if begun in self._open:
            self._open.remove(begun)

    def is_quiet(self) -> bool:
        """Whether no send is open or left in the window (forgetting it loses nothing)."""
        self._forget_before(self._clock() - self._window_s)
        return not self._ended and not self._open

    def _forget_before(self, moment: float) -> None:
        drop = bisect.bisect_right(self._ended, moment)
        if drop:
            del self._ended[:drop]
        stale = self._clock() - STALE_SEND_S
        if self._open and self._open[0] < stale:
            self._open = [begun for begun in self._open if begun >= stale]


class Pace:
    """A token bucket: ``burst`` sends at once, then one per ``interval_s``.

    >>> now = [0.0]
    >>> pace = Pace(2, 3.0, lambda: now[0])
    >>> pace.take(); pace.take(); pace.delay()
    3.0
    >>> now[0] = 1.5; pace.delay()
    1.5
    """

    def __init__(
        self,
        burst: int,
        interval_s: float,
        clock: Callable[[], float],
        state: dict[str, Any] | None = None,
    ) -> None:
        """``burst`` tokens refilled one per ``interval_s``; ``state`` continues a saved pace."""
        self._burst = float(max(1, burst))
        self._interval_s = interval_s
        self._clock = clock
        state = state or {}
        self._tokens = min(self._burst, float(state.get("tokens", self._burst)))
        self._at = float(state.get("at", clock()))

    def state(self) -> dict[str, Any]:
        """The pace as JSON (its tokens and when they were counted), to continue it elsewhere."""
        return {"tokens": self._tokens, "at": self._at}

    def is_full(self) -> bool:
        """Whether the whole burst is available (forgetting the pace loses nothing)."""
        self._refill()
        return self._burst - self._tokens <= 1e-9

    def delay(self) -> float:
        """Seconds until a token is free (0 if one is free now)."""
        self._refill()
        # A hair of tolerance: refilling by exactly the delay must free the token.
        missing = 1.0 - self._tokens
        return 0.0 if missing <= 1e-9 else missing * self._interval_s

    def take(self) -> None:
        """Spend a token."""
        self._refill()
        self._tokens -= 1.0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._at) / self._interval_s)
        self._at = now


State = dict[str, Any]
"""The JSON state of one chat's windows."""

SWAP_ATTEMPTS = 5
"""How often a slot is tried against a state other workers keep changing, before waiting."""
NO_SHARE_YET_S = 0.1
"""How long a send waits while this worker has no share of the bot-wide limit yet."""


@dataclass(frozen=True)
class ChatLimit:
    """The limits that apply to one chat: its window and, in a group, its pace."""

    messages: int
    window_s: float
    burst: int | None
    """None: no pace (a private chat), only the window."""
    interval_s: float


@dataclass(frozen=True)
class FloodLimits:
    """How many messages (and edits) may go out per rolling window."""

    group_messages: int = 20
    group_window_s: float = 61.0  # a second of margin over Telegram's minute
    group_burst: int = 3
    """Messages a quiet group gets at once; after them, one per even share of the window."""
    private_messages: int = 1
    private_window_s: float = 1.05
    bot_messages: int = 30
    bot_window_s: float = 1.05  # Telegram's second, with a margin
    enabled: bool = True

    @property
    def group_interval_s(self) -> float:
        """The steady spacing of a busy group's messages, once its burst is spent."""
        return self.group_window_s / max(1, self.group_messages - self.group_burst)

    def of_chat(self, chat_id: int) -> ChatLimit:
        """The limits of ``chat_id``: a group's (negative ids) or a private chat's."""
        if chat_id < 0:
            return ChatLimit(
                self.group_messages, self.group_window_s, self.group_burst, self.group_interval_s
            )
        return ChatLimit(self.private_messages, self.private_window_s, None, 0.0)


def _windows(limit: ChatLimit, now: float, chat: State) -> tuple[RollingWindow, Pace | None]:
    clock = lambda: now  # noqa: E731 - a step runs at one moment
    window = RollingWindow(limit.messages, limit.window_s, clock, chat.get("window"))
    pace = None
    if limit.burst is not None:
        pace = Pace(limit.burst, limit.interval_s, clock, chat.get("pace"))
    return window, pace


def reserve_step(limit: ChatLimit, now: float, chat: State) -> float:
    """Take a slot in the chat's state (changed in place) and answer 0, or the seconds to wait.

    A slot taken is begun at ``now``: :func:`finish_step` ends it.
    """
    window, pace = _windows(limit, now, chat)
    delay = max(window.delay(), pace.delay() if pace is not None else 0.0)
    if delay > 0:
        return delay
    window.begin()
    chat["window"] = window.state()
    if pace is not None:
        pace.take()
        chat["pace"] = pace.state()
    return 0.0


def finish_step(limit: ChatLimit, now: float, chat: State, begun: float | None) -> None:
    """The send whose slot was taken at ``begun`` has ended at ``now``: it counts from now."""
    window, _ = _windows(limit, now, chat)
    window.end(begun)
    chat["window"] = window.state()


def is_quiet(limit: ChatLimit, now: float, chat: State) -> bool:
    """Whether the chat's state counts nothing any more (forgetting it loses nothing)."""
    window, pace = _windows(limit, now, chat)
    return window.is_quiet() and (pace is None or pace.is_full())


class Pacer:
    """The slots of every chat this process sends to, and its share of the bot-wide window."""

    def __init__(
        self,
        limits: FloodLimits,
        coordination: Coordination,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Keep to ``limits``; ``clock`` is wall time where ``coordination`` shares the states."""
        self._sleep = sleep
        self.limits = limits
        self._coordination = coordination
        self._shared = coordination.shared
        self._clock = clock or (time.time if self._shared else time.monotonic)
        self._chats: dict[int, State] = {}
        self._unreadable = FailureRun(logger, "reading the flood-limit windows")
        """The failures in a row to read the windows (an outage: its traceback once)."""
        self._bot: State = {}
        self._begun: dict[int, deque[float]] = {}
        self._swept_at = self._clock()

    async def reserve(self, chat_id: int) -> float:
        """Take a slot for a send to ``chat_id`` now (0), or say how long to wait first."""
        if not self.limits.enabled:
            return 0.0
        limit = self.limits.of_chat(chat_id)
        share = self._coordination.bot_share()
        if share <= 0:
            return NO_SHARE_YET_S  # a worker that just joined others waits for their counts
        bot_count = max(1, int(self.limits.bot_messages * share))
        if chat_id not in self._chats:
            self._forget_quiet_chats(self._clock())
        seen = self._chats.setdefault(chat_id, {})
        for _ in range(SWAP_ATTEMPTS):
            now = self._clock()
            bot_window = self._bot_window(bot_count, now)
            chat = copy.deepcopy(seen)
            delay = max(reserve_step(limit, now, chat), bot_window.delay())
            if delay > 0:
                return delay
            # Taken before the swap's await: the chats that take theirs meanwhile count this one.
            bot_window.begin()
            self._bot["window"] = bot_window.state()
            replaced = False
            try:
                replaced = await self._replace(chat_id, seen, chat)
            finally:
                if not replaced:
                    self._give_back_bot_slot(now)
            if not replaced:
                seen = self._chats[chat_id]
                continue  # another worker sent to the chat meanwhile: count it
            self._begun.setdefault(chat_id, deque()).append(now)
            return 0.0
        return 0.05

    def sent_before_this_start(self, chat_id: int, seconds_ago: Sequence[float]) -> None:
        """A stopped process sent to ``chat_id`` that many seconds ago: count those sends.

        Its windows died with it, and Telegram still counts them: a start would burst into a
        full window. The chat's pace starts empty at its last send. (Shared states, of several
        workers, are stored: the caller does not count them again.)
        """
        if not self.limits.enabled or not seconds_ago:
            return
        limit = self.limits.of_chat(chat_id)
        now = self._clock()
        ended = sorted(now - max(0.0, ago) for ago in seconds_ago)
        clock = lambda: now  # noqa: E731 - the state as it stands at this start
        window = RollingWindow(limit.messages, limit.window_s, clock, {"ended": ended})
        state: State = {"window": window.state()}
        if limit.burst is not None:
            pace = Pace(limit.burst, limit.interval_s, clock, {"tokens": 0.0, "at": ended[-1]})
            state["pace"] = pace.state()
        self._chats[chat_id] = state

    def _give_back_bot_slot(self, begun: float) -> None:
        """The send whose bot-wide slot was taken at ``begun`` will not happen."""
        bot_window = self._bot_window(1, self._clock())
        bot_window.give_back(begun)
        self._bot["window"] = bot_window.state()

    async def _replace(self, chat_id: int, seen: State, chat: State) -> bool:
        """Make ``chat`` the chat's state, unless another worker changed it since ``seen``.

        False: it did, and the chat's state is read again (so the step counts its send).
        """
        if not self._shared:
            self._chats[chat_id] = chat
            return True
        if await self._coordination.swap_pace(chat_id, seen, chat):
            return True
        self._chats[chat_id] = await self._coordination.load_pace(chat_id)
        return False

    def _bot_window(self, count: int, now: float) -> RollingWindow:
        """The bot-wide window (the share of it this process keeps to), at ``now``."""
        return RollingWindow(count, self.limits.bot_window_s, lambda: now, self._bot.get("window"))

    async def wait_for_slot(self, chat_id: int) -> bool:
        """Wait until a send to ``chat_id`` fits every window, take its slot; whether it waited."""
        waited = False
        # The windows only free up as time passes, so there is no event to wait for.
        while (delay := await self._reserve_or_wait(chat_id)) > 0:
            waited = True
            await self._sleep(delay)
        return waited

    async def _reserve_or_wait(self, chat_id: int) -> float:
        try:
            delay = await self.reserve(chat_id)
        except Exception as error:
            # Sending uncounted could break the limits for every worker: wait and ask again.
            self._unreadable.failed(
                error,
                "chat %s: the flood-limit windows cannot be read (%s); waiting",
                chat_id,
                short_cause(error),
            )
            self._chats.pop(chat_id, None)
            return 1.0
        self._unreadable.succeeded()
        return delay

    async def sent(self, chat_id: int) -> None:
        """The send that took a slot in ``chat_id`` has ended now: it counts from now."""
        if not self.limits.enabled:
            return
        moments = self._begun.get(chat_id)
        begun = moments.popleft() if moments else None
        if moments is not None and not moments:
            del self._begun[chat_id]
        limit = self.limits.of_chat(chat_id)
        now = self._clock()
        bot_window = self._bot_window(1, now)
        bot_window.end(begun)
        self._bot["window"] = bot_window.state()
        try:
            for _ in range(SWAP_ATTEMPTS):
                seen = self._chats.setdefault(chat_id, {})
                chat = copy.deepcopy(seen)
                finish_step(limit, now, chat, begun)
                if await self._replace(chat_id, seen, chat):
                    return
            logger.warning("chat %s: could not count a send's end; its slot stays taken", chat_id)
        except Exception:
            # The slot stays taken until it is stale: the windows only err on the safe side.
            logger.exception("chat %s: ending a send in the flood-limit windows failed", chat_id)

    def _forget_quiet_chats(self, now: float) -> None:
        """Drop the windows that count nothing any more, at most once per group window.

        Asked when a chat not kept takes a slot: so chats seen once do not stay for ever.
        """
        if now - self._swept_at < self.limits.group_window_s:
            return
        self._swept_at = now
        for chat_id, chat in list(self._chats.items()):
            if chat_id in self._begun:
                continue
            if self._shared or is_quiet(self.limits.of_chat(chat_id), now, chat):
                del self._chats[chat_id]
