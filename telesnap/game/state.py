"""The state of a game of Snap: seats with their piles, the pot, the turn.

The actions that change a :class:`Board` live in :mod:`telesnap.game.engine`.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

from .cards import Card, MatchMode
from .operations import EndReason, Operation
from .race import Call, CallKind


class SeatStatus(enum.Enum):
    """Whether a seat still plays."""

    ACTIVE = "active"
    OUT = "out"  # no cards left: skipped, cannot call
    LEFT = "left"  # left or removed from the game


@dataclass(slots=True)
class Seat:
    """One player's piles: face down (top first) and face up (top last)."""

    face_down: deque[Card] = field(default_factory=deque)
    face_up: list[Card] = field(default_factory=list)
    status: SeatStatus = SeatStatus.ACTIVE

    @property
    def card_count(self) -> int:
        """How many cards the player holds in both piles."""
        return len(self.face_down) + len(self.face_up)

    @property
    def top(self) -> Card | None:
        """The top card of the face-up pile, or None when it is empty."""
        return self.face_up[-1] if self.face_up else None

    @property
    def is_active(self) -> bool:
        """Whether the player still plays (not out, not gone)."""
        return self.status is SeatStatus.ACTIVE


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the winners (several share the win) and why."""

    winners: tuple[int, ...]
    reason: EndReason


@dataclass(frozen=True, slots=True)
class RaceMemory:
    """The last decided race: the board version it was about and its first stamp.

    A call made on that board after the race is "too slow", not merely "too late".
    """

    board_version: int
    first_stamp_ns: int


@dataclass(eq=True, slots=True)
class Board:
    """Everything about a game at one moment, and the questions players ask about it."""

    seats: list[Seat] = field(default_factory=list)
    pot: list[Card] = field(default_factory=list)
    dealer: int = 0
    turn: int = 0
    last_flipper: int | None = None
    board_version: int = 0
    flips: int = 0
    match_mode: MatchMode = MatchMode.RANK
    wrong_call_penalty: bool = True
    pending_calls: list[Call] = field(default_factory=list)
    deferred_wrong_calls: list[int] = field(default_factory=list)
    last_race: RaceMemory | None = None
    called_from: dict[CallKind, list[int | None]] = field(default_factory=dict)
    """By call kind, then seat: the board version of the button of their last such call."""
    turn_ended_at: list[int] = field(default_factory=list)
    """By seat: the first board version shown after their last turn ended (flip or skip)."""
    outcome: Outcome | None = None
    history: list[Operation] = field(default_factory=list)

    @property
    def is_started(self) -> bool:
        """Whether the cards have been dealt."""
        return bool(self.seats)

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.outcome is not None

    @property
    def is_race_open(self) -> bool:
        """Whether correct calls are waiting for the race to be decided."""
        return bool(self.pending_calls)

    @property
    def pot_top(self) -> Card | None:
        """The top card of the Snap Pot, or None when there is no pot."""
        return self.pot[-1] if self.pot else None

    def active_seats(self) -> list[int]:
        """The seats still playing, in seat order."""
        return [index for index, seat in enumerate(self.seats) if seat.is_active]

    def card_counts(self) -> tuple[int, ...]:
        """How many cards each seat holds (the pot is nobody's)."""
        return tuple(seat.card_count for seat in self.seats)

    def next_active_after(self, seat: int) -> int | None:
        """The first active seat clockwise after ``seat`` (itself if alone; None if nobody)."""
        count = len(self.seats)
        for step in range(1, count + 1):
            candidate = (seat + step) % count
            if self.seats[candidate].is_active:
                return candidate
        return None

    def previous_active_before(self, seat: int) -> int | None:
        """The first active seat counter-clockwise before ``seat`` (on its right), not itself."""
        count = len(self.seats)
        for step in range(1, count):
            candidate = (seat - step) % count
            if self.seats[candidate].is_active:
                return candidate
        return None

    def visible_tops(self) -> list[tuple[int, Card]]:
        """The top face-up card of every active seat that shows one."""
        tops = []
        for index, seat in enumerate(self.seats):
            if seat.is_active and seat.face_up:
                tops.append((index, seat.face_up[-1]))
        return tops

    def matched_seats(self) -> tuple[int, ...]:
        """Seats whose face-up top matches another seat's face-up top (what "Snap!" takes)."""
        by_key: dict[object, list[int]] = {}
        for index, card in self.visible_tops():
            by_key.setdefault(self.match_mode.key(card), []).append(index)
        return tuple(
            sorted(index for seats in by_key.values() if len(seats) > 1 for index in seats)
        )

    def pot_matched_seats(self) -> tuple[int, ...]:
        """Seats whose face-up top matches the pot's top card (what "Snap Pot!" takes)."""
        pot_top = self.pot_top
        if pot_top is None:
            return ()
        key = self.match_mode.key(pot_top)
        return tuple(
            index for index, card in self.visible_tops() if self.match_mode.key(card) == key
        )

    def is_snap_showing(self) -> bool:
        """Whether "Snap!" is a correct call now."""
        return bool(self.matched_seats())

    def is_snap_pot_showing(self) -> bool:
        """Whether "Snap Pot!" is a correct call now."""
        return bool(self.pot_matched_seats())
