"""Engine benchmark: operations per second in simulated games, and replay speed.

Run: .venv/bin/python bench/engine.py [--seed S]

Replay is timed on the histories of whole simulated games (histories cannot be
concatenated: each starts with its own deal), played until they hold at least
10,000 operations together; the time is scaled to exactly 10,000 operations.
Each figure is the median of 5 runs. Goal: replay of 10,000 operations < 0.1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

from telesnap.game import Game, operation_from_json, operation_to_json
from telesnap.simulate import play_game

RUNS = 5
REPLAY_OPERATIONS = 10_000
GOAL_SECONDS = 0.1


def median_seconds(work: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    games: list[Game] = []
    started = time.perf_counter()
    while sum(len(game.history) for game in games) < 5 * REPLAY_OPERATIONS:
        games.append(play_game(rng, args.players, tie_window_ms=100, flip_limit=100_000))
    elapsed = time.perf_counter() - started
    operations = sum(len(game.history) for game in games)
    print(
        f"simulated play   {operations / elapsed:>10,.0f} operations/s  "
        f"({len(games)} games of {args.players} players, {operations:,} operations, "
        f"simulated players included)"
    )

    sample: list[Game] = []
    while sum(len(game.history) for game in sample) < REPLAY_OPERATIONS:
        sample.append(games[len(sample)])
    histories = [list(game.history) for game in sample]
    rows = [[operation_to_json(op) for op in history] for history in histories]
    sample_operations = sum(len(history) for history in histories)
    longest = max(len(history) for history in histories)
    scale = REPLAY_OPERATIONS / sample_operations

    def replay() -> None:
        for history, game in zip(histories, sample, strict=True):
            assert Game.replay(history) == game

    def replay_from_json() -> None:
        for game_rows, game in zip(rows, sample, strict=True):
            assert Game.replay([operation_from_json(row) for row in game_rows]) == game

    replay_seconds = median_seconds(replay) * scale
    json_seconds = median_seconds(replay_from_json) * scale
    print(
        f"replay           {replay_seconds * 1000:>10.1f} ms per 10,000 operations  "
        f"({len(sample)} games, {sample_operations:,} operations, longest {longest:,}; "
        f"median of {RUNS}, equality check included)"
    )
    print(
        f"replay from JSON {json_seconds * 1000:>10.1f} ms per 10,000 operations  "
        f"(operation_from_json + replay)"
    )
    met = replay_seconds < GOAL_SECONDS and json_seconds < GOAL_SECONDS
    print(
        f"goal             replay of 10,000 operations < {GOAL_SECONDS} s: "
        f"{'met' if met else 'NOT met'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
