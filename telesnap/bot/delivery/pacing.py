"""The windows that keep the outbox within Telegram's flood limits, and its pace.

A :class:`RollingWindow` counts sends from the moment each ended (and while it
is on its way), so sends the bot spaced a window apart are at least that far
apart when Telegram counts them. A :class:`Pace` spreads a busy chat's sends
evenly once a small burst is spent.

Both can be saved as plain JSON (:meth:`RollingWindow.state`, :meth:`Pace.state`)
and rebuilt from it, so that workers sharing a database continue one chat's
pace (see :mod:`.slots`); their times are then wall-clock seconds.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

_IN_FLIGHT_POLL_S = 0.02
"""How often to look again when every slot is taken by a send still on its way."""

STALE_SEND_S = 60.0
"""A send still "on its way" after this long was lost with its worker: it stops holding a slot."""


class RollingWindow:
    """At most ``count`` sends in any ``window_s`` seconds, counted from when each ended.

    A send takes a slot when it :meth:`begin` s and keeps it until ``window_s``
    after it :meth:`end` s. Each end names the begin it closes: a send whose
    worker died never ends, and its slot is freed ``STALE_SEND_S`` after it
    began, whatever the other sends do meanwhile.

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

        Only its own slot is closed: closing the oldest open one instead would
        close a dead worker's send in its place, and keep that slot taken for good
        (re-dated to this begin) while the chat stays busy. A send open so long
        that it was dropped as stale just counts from now.
        """
        if begun is not None and begun in self._open:
            self._open.remove(begun)
        bisect.insort(self._ended, self._clock())

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
        return self.until_full() == 0.0

    def delay(self) -> float:
        """Seconds until a token is free (0 if one is free now)."""
        self._refill()
        # A hair of tolerance: refilling by exactly the delay must free the token.
        missing = 1.0 - self._tokens
        return 0.0 if missing <= 1e-9 else missing * self._interval_s

    def until_full(self) -> float:
        """Seconds until the whole burst is available again (0 if it is now)."""
        self._refill()
        missing = self._burst - self._tokens
        return 0.0 if missing <= 1e-9 else missing * self._interval_s

    def take(self) -> None:
        """Spend a token."""
        self._refill()
        self._tokens -= 1.0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._at) / self._interval_s)
        self._at = now
