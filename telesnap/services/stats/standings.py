"""The final standings of an ended game, as its last message shows them.

Built from the engine's history, like the stats (:func:`~.figures.summarize_game`); reaction
times are stored with the history rows, so they survive a restart.

>>> from ...game import CallKind, Game, parse_cards
>>> game = Game()
>>> _ = game.deal(2, dealer=1, deck=parse_cards("7♠ 7♥ K♣ 2♦"))
>>> for seat in (0, 1, 0, 1):
...     _ = game.flip(seat)
>>> _ = game.call(1, CallKind.SNAP, stamp_ns=5, sequence=1, seen_version=4)
>>> _ = game.resolve_race(100)
>>> final = final_view(game, ["Ann", "Bob"], {1: 412})
>>> [(row.place, row.name, row.cards, row.snaps_won) for row in final.rows]
[(1, 'Bob', 4, 1), (2, 'Ann', 0, 0)]
>>> final.fastest
FastestCall(name='Bob', reaction_ms=412)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...game import CallVerdict, EndReason, Game, LeaveReason, Operation, SeatStatus, SnapCalled
from .figures import summarize_game

__all__ = ["FastestCall", "FinalView", "StandingRow", "correct_call_reaction", "final_view"]


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One player's line in the final standings."""

    seat: int
    name: str
    place: int
    cards: int
    snaps_won: int
    """Races won alone: Snaps and Snap Pots."""
    wrong_calls: int
    status: SeatStatus
    left_reason: LeaveReason | None
    is_winner: bool


@dataclass(frozen=True, slots=True)
class FastestCall:
    """The fastest correct call of a game: who made it, and its reaction time."""

    name: str
    reaction_ms: int


@dataclass(frozen=True, slots=True)
class FinalView:
    """How an ended game finished: the standings (best place first) and the fastest call."""

    reason: EndReason
    rows: tuple[StandingRow, ...]
    fastest: FastestCall | None
    pot: int = 0
    """The cards left in the Snap Pot: nobody's (RULES.md R20)."""


def correct_call_reaction(operation: Operation, reaction_ms: int | None) -> int | None:
    """``reaction_ms`` if the stored call was correct (``pending`` on arrival, whatever the race).

    >>> import dataclasses
    >>> from ...game import CallKind
    >>> called = SnapCalled(0, CallKind.SNAP, 0, 1, 4, CallVerdict.PENDING)
    >>> correct_call_reaction(called, 300)
    300
    >>> correct_call_reaction(dataclasses.replace(called, verdict=CallVerdict.WRONG), 120) is None
    True
    """
    if not isinstance(operation, SnapCalled) or reaction_ms is None:
        return None
    return reaction_ms if operation.verdict is CallVerdict.PENDING else None


def final_view(game: Game, names: list[str], fastest_calls: Mapping[int, int]) -> FinalView:
    """The standings of the ended ``game``; ``fastest_calls``: seat -> fastest correct call (ms)."""
    summary = summarize_game(game.history)
    winners = set(summary.winners)
    rows = sorted(
        (
            StandingRow(
                seat=seat,
                name=names[seat],
                place=summary.places[seat],
                cards=len(state.face_down) + len(state.face_up),
                snaps_won=figures.snaps_won + figures.pots_won,
                wrong_calls=figures.wrong_calls,
                status=state.status,
                left_reason=figures.walked_away,
                is_winner=seat in winners,
            )
            for seat, (state, figures) in enumerate(zip(game.seats, summary.seats, strict=True))
        ),
        key=lambda row: (row.place, row.seat),
    )
    fastest = None
    if fastest_calls:
        seat, reaction_ms = min(fastest_calls.items(), key=lambda item: (item[1], item[0]))
        fastest = FastestCall(names[seat], reaction_ms)
    return FinalView(summary.reason, tuple(rows), fastest, len(game.pot))
