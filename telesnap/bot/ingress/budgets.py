"""Budgets over a moving window: at most N hits per key in any S seconds.

Checked for every update on the event loop, flood or not: a few list operations, with no timer
or thread to take the interpreter from the event loop while a flood lasts.

>>> clock = iter([0.0, 1.0, 2.0, 11.5]).__next__
>>> windows = MovingWindows(Budget(2, 10.0), clock=clock)
>>> [windows.hit("ann") for _ in range(3)], windows.hit("ann")
([True, True, False], True)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass

__all__ = ["Budget", "MovingWindows"]

SWEEP_EVERY = 4096
"""How many hits pass between two sweeps of the keys whose window is empty."""


@dataclass(frozen=True, slots=True)
class Budget:
    """``count`` hits in any ``seconds``."""

    count: int
    seconds: float

    def __str__(self) -> str:
        return f"{self.count} per {self.seconds:g} s"


class MovingWindows:
    """One moving window of ``budget`` per key: the times of its hits still inside it."""

    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self._clock = clock
        self._hits: dict[Hashable, deque[float]] = {}
        self._until_sweep = SWEEP_EVERY

    def hit(self, key: Hashable) -> bool:
        """Count a hit for ``key`` if its window has room; whether it had."""
        now = self._clock()
        hits = self._inside(key, now)
        if len(hits) >= self.budget.count:
            return False
        hits.append(now)
        self._until_sweep -= 1
        if self._until_sweep <= 0:
            self._sweep(now)
        return True

    def has_room(self, key: Hashable) -> bool:
        """Whether a hit for ``key`` would be counted now (nothing is counted)."""
        return key not in self._hits or len(self._inside(key, self._clock())) < self.budget.count

    def _inside(self, key: Hashable, now: float) -> deque[float]:
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] <= now - self.budget.seconds:
            hits.popleft()
        return hits

    def _sweep(self, now: float) -> None:
        self._until_sweep = SWEEP_EVERY
        for key in [key for key, hits in self._hits.items() if not self._inside(key, now)]:
            del self._hits[key]
