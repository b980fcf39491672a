"""A user's network: how long their updates take to reach Telegram's servers.

A slow phone delays everything its user does (a message, a button press) by
``delay_ms`` plus or minus up to ``jitter_ms``, drawn anew for each update.

>>> import random
>>> link = NetworkDelay(delay_ms=80, jitter_ms=20)
>>> 0.060 <= link.sample(random.Random(1)) <= 0.100
True
>>> NetworkDelay(0, 0).sample(random.Random(1))
0.0
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class NetworkDelay:
    """A user's delay and jitter, in milliseconds."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0

    def __post_init__(self) -> None:
        if self.delay_ms < 0 or self.jitter_ms < 0:
            raise ValueError("delay_ms and jitter_ms must be 0 or more")
        if self.jitter_ms > self.delay_ms:
            raise ValueError("jitter_ms must not exceed delay_ms (an update cannot arrive early)")

    def sample(self, rng: random.Random) -> float:
        """One update's delay in seconds."""
        if not self.jitter_ms:
            return self.delay_ms / 1000
        return (self.delay_ms + rng.uniform(-self.jitter_ms, self.jitter_ms)) / 1000
