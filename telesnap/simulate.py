"""``telesnap simulate``: whole games of Snap played by simulated players.

Stamps are on a simulated clock, so the same seed always plays the same games; only the two
speed figures depend on the machine.

>>> summary = simulate(players=3, games=2, seed=1, tie_window_ms=100)
>>> summary["games"], sum(summary["wins_by_seat"]) >= 2
(2, True)
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .game import (
    CallKind,
    CallVerdict,
    Game,
    GameEnded,
    PenaltyPaid,
    PlayerOut,
    RaceResolved,
    shuffled_deck,
)

FLIP_LIMIT = 1000
NANOSECONDS_PER_MS = 1_000_000
FLIP_INTERVAL_MEDIAN_MS = 1500  # how long a player takes to flip once it is their turn


@dataclass(frozen=True, slots=True)
class SimulatedPlayer:
    """How one simulated player reacts: speed, attention and clumsiness."""

    reaction_median_ms: float
    reaction_spread: float
    attention: float  # chance of calling when something matches
    accuracy: float  # chance of calling the right kind ("Snap!" or "Snap Pot!")
    clumsiness: float  # chance of calling after a flip that shows nothing

    @classmethod
    def drawn(cls, rng: random.Random) -> SimulatedPlayer:
        """A player drawn at random from the generator passed in."""
        return cls(
            reaction_median_ms=rng.uniform(300, 600),
            reaction_spread=rng.uniform(0.15, 0.4),
            attention=rng.uniform(0.5, 0.95),
            accuracy=rng.uniform(0.85, 0.99),
            clumsiness=rng.uniform(0.0, 0.02),
        )

    def reaction_ns(self, rng: random.Random) -> int:
        """A reaction time in nanoseconds, drawn from this player's distribution."""
        ms = rng.lognormvariate(math.log(self.reaction_median_ms), self.reaction_spread)
        return round(ms * NANOSECONDS_PER_MS)


def _planned_calls(
    game: Game, players: list[SimulatedPlayer], rng: random.Random, shown_at_ns: int
) -> list[tuple[int, int, CallKind]]:
    """The calls the players make on the board just shown, as (stamp, seat, kind), by stamp."""
    snap, snap_pot = game.is_snap_showing(), game.is_snap_pot_showing()
    calls = []
    for seat in game.active_seats():
        player = players[seat]
        if snap or snap_pot:
            if rng.random() >= player.attention:
                continue
            right = rng.choice(
                [k for k, shows in zip(CallKind, (snap, snap_pot), strict=True) if shows]
            )
            wrong = CallKind.SNAP_POT if right is CallKind.SNAP else CallKind.SNAP
            kind = right if rng.random() < player.accuracy else wrong
        elif rng.random() < player.clumsiness:
            kind = rng.choice(list(CallKind))
        else:
            continue
        calls.append((shown_at_ns + player.reaction_ns(rng), seat, kind))
    return sorted(calls, key=lambda call: (call[0], call[1]))


def play_game(rng: random.Random, player_count: int, tie_window_ms: int, flip_limit: int) -> Game:
    """Play one whole game with simulated players and return it (its history tells all)."""
    game = Game()
    game.deal(player_count, dealer=rng.randrange(player_count), deck=shuffled_deck(rng))
    players = [SimulatedPlayer.drawn(rng) for _ in range(player_count)]
    window_ns = tie_window_ms * NANOSECONDS_PER_MS
    clock_ns = sequence = 0
    while not game.is_over:
        if game.flips >= flip_limit:
            game.end_by_limit()
            break
        game.flip(game.turn)
        seen = game.board_version
        deadline: int | None = None
        for stamp_ns, seat, kind in _planned_calls(game, players, rng, clock_ns):
            if game.is_race_open and deadline is not None and stamp_ns > deadline:
                game.resolve_race(tie_window_ms)
            if game.is_over:
                break
            sequence += 1
            if game.can_call(seat, seen, kind):
                op = game.call(seat, kind, stamp_ns=stamp_ns, sequence=sequence, seen_version=seen)
                if op.verdict is CallVerdict.PENDING and deadline is None:
                    deadline = stamp_ns + window_ns
            clock_ns = max(clock_ns, stamp_ns)
        if game.is_race_open:
            game.resolve_race(tie_window_ms)
        interval_ms = rng.lognormvariate(math.log(FLIP_INTERVAL_MEDIAN_MS), 0.5)
        clock_ns += round(interval_ms * NANOSECONDS_PER_MS)
    return game


@dataclass(slots=True)
class Tally:
    """What happened over all the simulated games."""

    player_count: int
    games: int = 0
    flips: int = 0
    operations: int = 0
    snaps: int = 0
    ties: int = 0
    pot_wins: int = 0
    penalties: int = 0
    eliminations: int = 0
    wins_by_seat: list[int] = field(default_factory=list)
    endings: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.wins_by_seat = [0] * self.player_count

    def add(self, game: Game) -> None:
        """Count one finished game."""
        self.games += 1
        self.flips += game.flips
        self.operations += len(game.history)
        for op in game.history:
            if isinstance(op, RaceResolved):
                self.snaps += len(op.winners) == 1
                self.ties += len(op.winners) > 1
                self.pot_wins += op.pot_taken
            elif isinstance(op, PenaltyPaid):
                self.penalties += 1
            elif isinstance(op, PlayerOut):
                self.eliminations += 1
            elif isinstance(op, GameEnded):
                self.endings[op.reason.value] += 1
                for seat in op.winners:
                    self.wins_by_seat[seat] += 1


def simulate(*, players: int, games: int, seed: int, tie_window_ms: int) -> dict[str, Any]:
    """Play ``games`` games and return the summary (speed figures under ``speed``)."""
    rng = random.Random(seed)
    tally = Tally(players)
    started = time.perf_counter()
    for _ in range(games):
        tally.add(play_game(rng, players, tie_window_ms, FLIP_LIMIT))
    elapsed = max(time.perf_counter() - started, 1e-9)
    return {
        "players": players,
        "games": tally.games,
        "seed": seed,
        "tie_window_ms": tie_window_ms,
        "flip_limit": FLIP_LIMIT,
        "flips_per_game": round(tally.flips / tally.games, 1),
        "snaps": tally.snaps,
        "ties": tally.ties,
        "pot_wins": tally.pot_wins,
        "penalties": tally.penalties,
        "eliminations": tally.eliminations,
        "endings": dict(sorted(tally.endings.items())),
        "wins_by_seat": tally.wins_by_seat,
        "operations": tally.operations,
        "speed": {
            "games_per_second": round(tally.games / elapsed, 1),
            "operations_per_second": round(tally.operations / elapsed),
        },
    }
