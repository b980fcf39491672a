"""The Snap race as a pure function of the calls and the tie window.

Every correct call stamped within ``tie_window_ms`` of the earliest is in the race. The
result depends only on the stamps (and the sequence for equal stamps), never on the order
in which the calls are given:

>>> calls = [Call(1, CallKind.SNAP, 40_000_000, 8), Call(0, CallKind.SNAP, 0, 7)]
>>> decide_race(calls, tie_window_ms=100).winning_seats
(0, 1)
>>> decide_race(calls, tie_window_ms=20).winning_seats
(0,)
>>> decide_race(calls, tie_window_ms=20).too_slow
((Call(seat=1, kind=<CallKind.SNAP: 'snap'>, stamp_ns=40000000, sequence=8), 40),)
>>> decide_race(list(reversed(calls)), 20) == decide_race(calls, 20)
True
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import NoRaceError, SnapError

NANOSECONDS_PER_MS = 1_000_000


class CallKind(enum.Enum):
    """What a player called: "Snap!" (two face-up piles) or "Snap Pot!" (a pile and the pot)."""

    SNAP = "snap"
    SNAP_POT = "snap_pot"


@dataclass(frozen=True, slots=True)
class Call:
    """One call as the server received it; ``sequence`` (the update_id) orders equal stamps."""

    seat: int
    kind: CallKind
    stamp_ns: int
    sequence: int

    @property
    def order_key(self) -> tuple[int, int, int]:
        """The key that orders calls: stamp, then sequence, then seat."""
        return (self.stamp_ns, self.sequence, self.seat)


def milliseconds_behind(stamp_ns: int, first_stamp_ns: int) -> int:
    """Whole milliseconds by which a stamp trails the first one, rounded up.

    >>> milliseconds_behind(40_000_001, 0), milliseconds_behind(5, 5)
    (41, 0)
    """
    return -(-(stamp_ns - first_stamp_ns) // NANOSECONDS_PER_MS)


@dataclass(frozen=True, slots=True)
class RaceDecision:
    """Who won a race, who tied with them, and who was too slow (and by how many ms)."""

    winners: tuple[Call, ...]
    too_slow: tuple[tuple[Call, int], ...]

    @property
    def is_tie(self) -> bool:
        """Whether several callers tied (their piles go into the Snap Pot)."""
        return len(self.winners) > 1

    @property
    def winning_seats(self) -> tuple[int, ...]:
        """The seats of the winners, in stamp order."""
        return tuple(call.seat for call in self.winners)


def decide_race(calls: Iterable[Call], tie_window_ms: int) -> RaceDecision:
    """Decide a race among correct calls; a seat's later calls are ignored.

    ``tie_window_ms = 0`` means no ties: the earliest call wins.
    """
    if tie_window_ms < 0:
        raise SnapError(f"The tie window is 0 ms or more, not {tie_window_ms}.")
    earliest_by_seat: dict[int, Call] = {}
    for call in sorted(calls, key=lambda call: call.order_key):
        earliest_by_seat.setdefault(call.seat, call)
    ordered = sorted(earliest_by_seat.values(), key=lambda call: call.order_key)
    if not ordered:
        raise NoRaceError("No Snap call is waiting to be decided.")
    first = ordered[0]
    window_ns = tie_window_ms * NANOSECONDS_PER_MS
    winners = [first]
    too_slow: list[tuple[Call, int]] = []
    for call in ordered[1:]:
        if tie_window_ms > 0 and call.stamp_ns - first.stamp_ns <= window_ns:
            winners.append(call)
        else:
            too_slow.append((call, milliseconds_behind(call.stamp_ns, first.stamp_ns)))
    return RaceDecision(tuple(winners), tuple(too_slow))
