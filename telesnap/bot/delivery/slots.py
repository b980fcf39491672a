"""Send slots within Telegram's flood limits: per chat, and for the whole bot, in one place.

Before each send the outbox :meth:`~Slots.reserve` s a slot (the chat's
rolling window, its pace, and the bot-wide window must all have room) and
afterwards :meth:`~Slots.finish` es it. Both run one pure step on the chat's
state and the bot's (:func:`reserve_step`, :func:`finish_step`), wherever that
state lives:

- :class:`MemorySlots` keeps it in the process (one process, SQLite);
- :class:`StoredSlots` keeps it in the database, locked while a step runs, so
  that all workers sharing the database count every message together: their
  sends to a group stay within its 20 a minute and their pace continues from
  one worker to the next, and the bot-wide window (the row of chat 0) counts
  every worker's messages. Its times are wall-clock seconds, so the workers'
  clocks must agree (NTP) to well under the windows' margins.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .pacing import Pace, RollingWindow

logger = logging.getLogger(__name__)

State = dict[str, Any]
"""The JSON state of one chat's windows (or of the bot-wide one)."""

BOT_WIDE = 0
"""The key of the bot-wide window's state (no chat has id 0)."""


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


def chat_limit(limits: FloodLimits, chat_id: int) -> ChatLimit:
    """The limits of ``chat_id``: a group's (negative ids) or a private chat's."""
    if chat_id < 0:
        return ChatLimit(
            limits.group_messages,
            limits.group_window_s,
            limits.group_burst,
            limits.group_interval_s,
        )
    return ChatLimit(limits.private_messages, limits.private_window_s, None, 0.0)


def reserve_step(limits: FloodLimits, chat_id: int, now: float, chat: State, bot: State) -> float:
    """Take a slot in ``chat`` and ``bot`` (the states, changed in place) and answer 0.

    If one of them has no room, nothing is taken and the answer is the seconds
    to wait.
    A slot taken is begun at ``now``: :func:`finish_step` ends it by that moment.
    """
    limit = chat_limit(limits, chat_id)
    clock = lambda: now  # noqa: E731 - the step runs at one moment
    window = RollingWindow(limit.messages, limit.window_s, clock, chat.get("window"))
    bot_window = RollingWindow(limits.bot_messages, limits.bot_window_s, clock, bot.get("window"))
    pace = None
    if limit.burst is not None:
        pace = Pace(limit.burst, limit.interval_s, clock, chat.get("pace"))
    waits = [window.delay(), bot_window.delay()]
    if pace is not None:
        waits.append(pace.delay())
    delay = max(waits)
    if delay <= 0:
        window.begin()
        bot_window.begin()
        if pace is not None:
            pace.take()
        delay = 0.0
    chat["window"] = window.state()
    bot["window"] = bot_window.state()
    if pace is not None:
        chat["pace"] = pace.state()
    return delay


def finish_step(
    limits: FloodLimits, chat_id: int, now: float, chat: State, bot: State, *, begun: float | None
) -> None:
    """The send in ``chat`` whose slot was taken at ``begun`` has ended now: it counts from now.

    ``begun`` None: the moment is not known here (nothing open is closed).
    """
    limit = chat_limit(limits, chat_id)
    clock = lambda: now  # noqa: E731 - the step runs at one moment
    window = RollingWindow(limit.messages, limit.window_s, clock, chat.get("window"))
    bot_window = RollingWindow(limits.bot_messages, limits.bot_window_s, clock, bot.get("window"))
    window.end(begun)
    bot_window.end(begun)
    chat["window"] = window.state()
    bot["window"] = bot_window.state()


def is_quiet(limits: FloodLimits, chat_id: int, now: float, chat: State) -> bool:
    """Whether the chat's state counts nothing any more (forgetting it loses nothing)."""
    limit = chat_limit(limits, chat_id)
    clock = lambda: now  # noqa: E731 - the step runs at one moment
    window = RollingWindow(limit.messages, limit.window_s, clock, chat.get("window"))
    if not window.is_quiet():
        return False
    if limit.burst is None:
        return True
    return Pace(limit.burst, limit.interval_s, clock, chat.get("pace")).is_full()


class Slots(Protocol):
    """Where the outbox takes a slot before each send, and gives it back after."""

    async def reserve(self, chat_id: int) -> float:
        """Take a slot for a send to ``chat_id`` now (0), or say how long to wait first."""

    async def finish(self, chat_id: int) -> None:
        """The send that took a slot in ``chat_id`` has ended now."""

    def forget_if_quiet(self, chat_id: int) -> bool:
        """Drop the chat's state if it counts nothing any more; whether it is gone."""


@dataclass
class _Begun:
    """When this process's sends still on their way took their slots, per chat (oldest first)."""

    moments: dict[int, deque[float]] = field(default_factory=dict)

    def took(self, chat_id: int, now: float, delay: float) -> float:
        """Note the slot a reserve at ``now`` took (``delay`` 0); return ``delay``."""
        if delay <= 0:
            self.moments.setdefault(chat_id, deque()).append(now)
        return delay

    def ended(self, chat_id: int) -> float | None:
        """When the send in ``chat_id`` that ends now took its slot (None: not known)."""
        moments = self.moments.get(chat_id)
        if not moments:
            return None
        begun = moments.popleft()
        if not moments:
            del self.moments[chat_id]
        return begun


class MemorySlots:
    """Slots whose state lives in this process: right for one process."""

    def __init__(self, limits: FloodLimits, clock: Callable[[], float]) -> None:
        """Keep to ``limits``, on ``clock`` (monotonic seconds)."""
        self._limits = limits
        self._clock = clock
        self._chats: dict[int, State] = {}
        self._bot: State = {}
        self._begun = _Begun()

    async def reserve(self, chat_id: int) -> float:
        """Take a slot for a send to ``chat_id`` now (0), or say how long to wait first."""
        chat = self._chats.setdefault(chat_id, {})
        now = self._clock()
        delay = reserve_step(self._limits, chat_id, now, chat, self._bot)
        return self._begun.took(chat_id, now, delay)

    async def finish(self, chat_id: int) -> None:
        """The send that took a slot in ``chat_id`` has ended now."""
        chat = self._chats.setdefault(chat_id, {})
        begun = self._begun.ended(chat_id)
        finish_step(self._limits, chat_id, self._clock(), chat, self._bot, begun=begun)

    def forget_if_quiet(self, chat_id: int) -> bool:
        """Drop the chat's state if it counts nothing any more; whether it is gone."""
        chat = self._chats.get(chat_id)
        if chat is not None and not is_quiet(self._limits, chat_id, self._clock(), chat):
            return False
        self._chats.pop(chat_id, None)
        return True


StateStep = Callable[[list[State]], tuple[list[State], Any]]
"""A step on the stored states of some keys (in the order asked), and its answer."""

StoredStates = Callable[[list[int], StateStep], Awaitable[Any]]
"""Runs a step on the stored states of ``keys``, each locked meanwhile (the outbox service)."""


class StoredSlots:
    """Slots whose state lives in the database: shared by every worker that uses it."""

    def __init__(
        self, limits: FloodLimits, states: StoredStates, clock: Callable[[], float]
    ) -> None:
        """Keep to ``limits`` with the states ``states`` stores, on ``clock`` (wall seconds)."""
        self._limits = limits
        self._states = states
        self._clock = clock
        self._begun = _Begun()

    async def reserve(self, chat_id: int) -> float:
        """Take a slot for a send to ``chat_id`` now (0), or say how long to wait first."""

        def step(states: list[State]) -> tuple[list[State], tuple[float, float]]:
            chat, bot = states
            now = self._clock()
            delay = reserve_step(self._limits, chat_id, now, chat, bot)
            return [chat, bot], (now, delay)

        now, delay = await self._states([chat_id, BOT_WIDE], step)
        return self._begun.took(chat_id, now, delay)

    async def finish(self, chat_id: int) -> None:
        """The send that took a slot in ``chat_id`` has ended now."""
        begun = self._begun.ended(chat_id)

        def step(states: list[State]) -> tuple[list[State], None]:
            chat, bot = states
            finish_step(self._limits, chat_id, self._clock(), chat, bot, begun=begun)
            return [chat, bot], None

        await self._states([chat_id, BOT_WIDE], step)

    def forget_if_quiet(self, chat_id: int) -> bool:
        """Nothing is kept in the process: the database holds the state."""
        return True
