"""Flood control: how many messages and edits a bot may send, and when.

Per group a rolling minute holds at most ``group_per_minute`` sends; a private
chat allows about one a second after a small burst; the whole bot at most
``global_per_second``. A refused send counts for nothing.

>>> now = [0.0]
>>> control = FloodControl(FloodLimits(group_per_minute=2), lambda: now[0])
>>> control.admit(-1, is_private=False); control.admit(-1, is_private=False)
>>> control.admit(-1, is_private=False)
Traceback (most recent call last):
...
telesnap.emulator.errors.ApiError: Too Many Requests: retry after 60
"""

from __future__ import annotations

import math
from collections import defaultdict, deque

from .config import Clock, FloodLimits
from .errors import too_many_requests


class FloodControl:
    """Count sends per chat and for the whole bot against :class:`FloodLimits`."""

    def __init__(self, limits: FloodLimits, clock: Clock) -> None:
        self.limits = limits
        self._clock = clock
        self._group_sends: dict[int, deque[float]] = defaultdict(deque)
        self._private_tokens: dict[int, tuple[float, float]] = {}
        """Each private chat's bucket: its tokens, and when they were counted."""
        self._all_sends: deque[float] = deque()

    def admit(self, chat_id: int, *, is_private: bool) -> None:
        """Count one send to ``chat_id``, or raise the 429 error if it is over a limit."""
        if not self.limits.enabled:
            return
        now = self._clock()
        waits = [self._wait_in_window(self._all_sends, now, 1.0, self.limits.global_per_second)]
        tokens = self._private_bucket(chat_id, now) if is_private else 0.0
        if is_private:
            waits.append(max(0.0, 1.0 - tokens) / self.limits.private_per_second)
        else:
            waits.append(
                self._wait_in_window(
                    self._group_sends[chat_id],
                    now,
                    self.limits.group_window_seconds,
                    self.limits.group_per_minute,
                )
            )
        wait = max(waits)
        if wait > 0:
            raise too_many_requests(max(1, math.ceil(wait)))
        self._all_sends.append(now)
        if is_private:
            self._private_tokens[chat_id] = (tokens - 1.0, now)
        else:
            self._group_sends[chat_id].append(now)

    @staticmethod
    def _wait_in_window(sends: deque[float], now: float, window: float, limit: int) -> float:
        while sends and sends[0] <= now - window:
            sends.popleft()
        if len(sends) < limit:
            return 0.0
        return sends[len(sends) - limit] + window - now

    def _private_bucket(self, chat_id: int, now: float) -> float:
        """The tokens a private chat's bucket holds now (a send takes one).

        It holds ``private_burst`` at most, and gains one each ``1 / private_per_second`` s.
        """
        tokens, at = self._private_tokens.get(chat_id, (float(self.limits.private_burst), now))
        return min(
            float(self.limits.private_burst), tokens + (now - at) * self.limits.private_per_second
        )
