"""``telesnap simulate``: same seed, same summary; the figures add up."""

from __future__ import annotations

import json
from typing import Any

import pytest

from telesnap.cli import build_parser
from telesnap.cli.simulate import main


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    args = build_parser().parse_args(["simulate", *arguments])
    assert main(args) == 0
    return capsys.readouterr().out


def summary(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(run(capsys, *arguments, "--json"))
    return result


def test_the_same_seed_gives_the_same_summary_but_for_the_speed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    arguments = ("--players", "3", "--games", "8", "--seed", "42")
    first = summary(capsys, *arguments)
    second = summary(capsys, *arguments)
    assert set(first["speed"]) == {"games_per_second", "operations_per_second"}
    del first["speed"], second["speed"]
    assert json.dumps(first) == json.dumps(second)
    other_seed = summary(capsys, "--players", "3", "--games", "8", "--seed", "43")
    del other_seed["speed"]
    assert other_seed != first


def test_the_summary_counts_every_game_and_its_winners(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = summary(capsys, "--players", "4", "--games", "10", "--seed", "7")
    assert result["games"] == 10
    assert sum(result["endings"].values()) == 10
    assert len(result["wins_by_seat"]) == 4
    assert sum(result["wins_by_seat"]) >= 10  # shared wins count for each winner
    assert 0 < result["flips_per_game"] <= result["flip_limit"]
    assert result["snaps"] > 0
    assert result["operations"] > 0


def test_a_zero_tie_window_never_ties(capsys: pytest.CaptureFixture[str]) -> None:
    result = summary(capsys, "--players", "5", "--games", "5", "--seed", "3", "--tie-window", "0")
    assert result["ties"] == 0
    assert result["pot_wins"] == 0  # without ties there is never a pot


def test_the_text_summary_names_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    text = run(capsys, "--players", "2", "--games", "3", "--seed", "1")
    for label in ("games", "flips per game", "snaps", "ties", "pot wins", "penalties"):
        assert f"\n{label} " in f"\n{text}"
    for label in ("eliminations", "winners by seat", "games/s", "operations/s"):
        assert label in text
