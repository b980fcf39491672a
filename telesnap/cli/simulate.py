"""``telesnap simulate``: play whole games with simulated players and print the summary."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..simulate import simulate

__all__ = ["format_summary", "main"]


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as lines of text for a terminal."""
    endings = ", ".join(f"{reason} {count}" for reason, count in summary["endings"].items())
    seats = " ".join(f"{seat}:{wins}" for seat, wins in enumerate(summary["wins_by_seat"]))
    speed = summary["speed"]
    return "\n".join(
        [
            f"games            {summary['games']} ({summary['players']} players, "
            f"seed {summary['seed']}, tie window {summary['tie_window_ms']} ms, "
            f"flip limit {summary['flip_limit']})",
            f"flips per game   {summary['flips_per_game']}",
            f"snaps            {summary['snaps']} (races won outright)",
            f"ties             {summary['ties']}",
            f"pot wins         {summary['pot_wins']}",
            f"penalties        {summary['penalties']}",
            f"eliminations     {summary['eliminations']}",
            f"endings          {endings}",
            f"winners by seat  {seats}",
            f"games/s          {speed['games_per_second']}",
            f"operations/s     {speed['operations_per_second']} ({summary['operations']} ops)",
        ]
    )


def main(args: argparse.Namespace) -> int:
    """Run ``telesnap simulate`` and print one summary; return the exit code."""
    summary = simulate(
        players=args.players, games=args.games, seed=args.seed, tie_window_ms=args.tie_window
    )
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0
