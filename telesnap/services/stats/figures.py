"""What a finished game says about its players: figures, final standings, rating changes.

Pure functions of the engine history, so the bot, the recorder, the audit and the
benchmark all compute the same thing. Abandoned games count for nothing. Anti-pumping:
only *contested* games (at least two players did not walk away) are rated and give a
win, so beating a partner who walks away gains nothing; walking away is a loss. An
uncontested game is not one of the stayer's games either, so it costs them nothing.

>>> from ...game import Game, parse_cards
>>> game = Game()
>>> _ = game.deal(2, dealer=1, deck=parse_cards("7♠ 7♥ K♣ 2♦"))
>>> for seat in (0, 1, 0, 1):
...     _ = game.flip(seat)
>>> _ = game.call(1, CallKind.SNAP, stamp_ns=5, sequence=1, seen_version=4)
>>> _ = game.resolve_race(100)
>>> summary = summarize_game(game.history)
>>> summary.places, summary.rated, summary.seats[1].snaps_won, summary.seats[1].cards_won
((2, 1), True, 1, 4)
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from openskill.models import PlackettLuce

from ...game import (
    CallKind,
    CallVerdict,
    EndReason,
    GameEnded,
    GameStarted,
    LeaveReason,
    Operation,
    PlayerLeft,
    PlayerOut,
    RaceResolved,
    SnapCalled,
)

__all__ = [
    "POINTS_PER_MU",
    "RATING_BASELINE",
    "RATING_MODEL",
    "GameSummary",
    "Rating",
    "SeatFigures",
    "initial_rating",
    "median_ms",
    "rate_game",
    "shown_change",
    "summarize_game",
]

RATING_MODEL = PlackettLuce()
"""OpenSkill's Plackett-Luce model with its default parameters (mu 25, sigma 25/3)."""
RATING_BASELINE = 1000.0
"""The rating every player is shown before their first rated game."""
POINTS_PER_MU = 20.0
"""Rating points per unit of the model's skill estimate ``mu``.

The model's unit of skill difference (``beta``, 25/6 of ``mu``) is then about 83
points: the gap at which the model expects the stronger of two settled players to win
three games in four.
"""


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's skill estimate ``mu``, its uncertainty ``sigma``, and the rating shown.

    ``points`` (what players see and boards rank by) follows ``mu`` via :func:`shown_change`.
    OpenSkill's ordinal is not shown: it rises as the uncertainty shrinks, after losses too.
    """

    mu: float
    sigma: float
    points: float = RATING_BASELINE

    @property
    def ordinal(self) -> float:
        """OpenSkill's conservative estimate ``mu - 3 sigma`` (0 for a new player; exported).

        >>> initial_rating().ordinal
        0.0
        """
        return self.mu - 3 * self.sigma


def shown_change(mu_change: float, *, won: bool) -> float:
    """How far one rated game moves the shown rating, given how far it moved ``mu``.

    A loss never raises it, a win never lowers it: in a game of three or more, ``mu`` can
    rise for a loser (above a stronger player) and fall for players who share a win.

    >>> shown_change(2.5, won=True), shown_change(-1.0, won=False)
    (50.0, -20.0)
    >>> shown_change(0.7, won=False), shown_change(-0.4, won=True)
    (0.0, 0.0)
    """
    change = POINTS_PER_MU * mu_change
    return max(change, 0.0) if won else min(change, 0.0)


def initial_rating() -> Rating:
    """The rating of a player who has not played a rated game."""
    return Rating(RATING_MODEL.mu, RATING_MODEL.sigma)


@dataclass(slots=True)
class SeatFigures:
    """One seat's figures in one game."""

    seat: int
    snaps_won: int = 0
    pots_won: int = 0
    ties: int = 0
    wrong_calls: int = 0
    cards_won: int = 0
    walked_away: LeaveReason | None = None


@dataclass(frozen=True, slots=True)
class GameSummary:
    """A finished (or abandoned) game, seen from the stats."""

    reason: EndReason
    winners: tuple[int, ...]
    flips: int
    seats: tuple[SeatFigures, ...]
    places: tuple[int, ...]
    operations: int
    contested: bool = field(default=True)

    @property
    def counted(self) -> bool:
        """Whether the game counts in the figures (abandoned games do not)."""
        return self.reason is not EndReason.ABANDONED

    @property
    def rated(self) -> bool:
        """Whether the game changes ratings and gives wins."""
        return self.counted and self.contested

    def won(self, seat: int) -> bool:
        """Whether ``seat`` is credited with a win."""
        return self.rated and seat in self.winners

    def played_by(self, seat: int) -> bool:
        """Whether the game counts in ``seat``'s games.

        An uncontested game counts for those who walked away (a loss), not for the one who
        stayed: it gives them no win, so counting it would lower their win rate.
        """
        return self.counted and (self.contested or self.seats[seat].walked_away is not None)


def summarize_game(history: Sequence[Operation]) -> GameSummary:
    """Read an ended game's history: every seat's figures and the final standings."""
    start = history[0]
    end = history[-1]
    if not isinstance(start, GameStarted) or not isinstance(end, GameEnded):
        raise ValueError("a summary needs a whole game, from GameStarted to GameEnded")
    seats = tuple(SeatFigures(seat) for seat in range(start.player_count))
    keys: list[tuple[int, int]] = [(3, count) for count in end.card_counts]
    flips = 0
    last_out_at = -2
    out_group = 0
    for index, op in enumerate(history):
        if op.kind == "card_flipped":
            flips += 1
        elif isinstance(op, SnapCalled):
            if op.verdict is CallVerdict.WRONG:
                seats[op.seat].wrong_calls += 1
        elif isinstance(op, RaceResolved):
            _count_race(seats, op)
        elif isinstance(op, PlayerOut):
            out_group += index != last_out_at + 1
            last_out_at = index
            keys[op.seat] = (2, out_group)
        elif isinstance(op, PlayerLeft):
            seats[op.seat].walked_away = op.leave_reason
            keys[op.seat] = (0, 0) if op.leave_reason is LeaveReason.AFK else (1, index)
    for seat in end.winners:
        keys[seat] = (4, 0)
    places = tuple(1 + sum(other > key for other in keys) for key in keys)
    stayed = sum(figures.walked_away is None for figures in seats)
    return GameSummary(
        reason=end.reason,
        winners=end.winners,
        flips=flips,
        seats=seats,
        places=places,
        operations=len(history),
        contested=stayed >= 2,
    )


def _count_race(seats: tuple[SeatFigures, ...], op: RaceResolved) -> None:
    if len(op.winners) > 1:
        for seat in op.winners:
            seats[seat].ties += 1
        return
    (winner,) = op.winners
    if op.call is CallKind.SNAP_POT:
        seats[winner].pots_won += 1
    else:
        seats[winner].snaps_won += 1
    seats[winner].cards_won += op.cards


def rate_game(ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
    """New ratings after a game: Plackett-Luce over the final standings, one team per player.

    Place 1 (held by a rated game's winners, and only they) is a win; any other is a loss.
    """
    teams = [[RATING_MODEL.create_rating([rating.mu, rating.sigma])] for rating in ratings]
    rated = RATING_MODEL.rate(teams, ranks=[float(place) for place in places])
    return [
        Rating(
            team[0].mu,
            team[0].sigma,
            before.points + shown_change(team[0].mu - before.mu, won=place == 1),
        )
        for before, team, place in zip(ratings, rated, places, strict=True)
    ]


def median_ms(values: Sequence[int]) -> int | None:
    """The median reaction time, rounded down to a whole ms (None when there is none).

    >>> median_ms([300, 100, 200, 250]), median_ms([])
    (225, None)
    """
    if not values:
        return None
    return int(statistics.median(values))
