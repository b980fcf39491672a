"""Versioned history (R25): every history written by an earlier format still replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from telesnap.game import Game, operation_from_json, operation_to_json
from telesnap.game.operations import FORMAT_KEY, FORMAT_UPGRADES, HISTORY_FORMAT

FORMAT_1 = Path(__file__).parent / "fixtures" / "history_format_1.tsv"
STORED = "# stored: "


def read_document(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``# stored:`` facts and the operations of a /replay document."""
    facts: dict[str, Any] = {}
    payloads = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(STORED):
            facts = json.loads(line[len(STORED) :])
        elif line and not line.startswith("#"):
            _, _, payload = line.split("\t", 2)
            payloads.append(json.loads(payload))
    return facts, payloads


def test_r25_a_history_stored_in_format_1_still_replays() -> None:
    facts, payloads = read_document(FORMAT_1)
    assert payloads
    assert all(FORMAT_KEY not in payload for payload in payloads)
    game = Game.replay(operation_from_json(payload) for payload in payloads)
    assert len(game.history) == facts["operations"]
    assert game.flips == facts["flips"]
    assert game.outcome is not None
    assert [facts["user_ids"][seat] for seat in game.outcome.winners] == facts["winner_ids"]
    assert game.outcome.reason.value == facts["end_reason"]
    assert sum(game.card_counts()) + len(game.pot) == 52


def test_r25_an_old_history_written_again_is_in_the_current_format_and_the_same_game() -> None:
    _, payloads = read_document(FORMAT_1)
    game = Game.replay(operation_from_json(payload) for payload in payloads)
    rewritten = [operation_to_json(op) for op in game.history]
    assert {payload[FORMAT_KEY] for payload in rewritten} == {HISTORY_FORMAT}
    for old, new in zip(payloads, rewritten, strict=True):
        assert {k: v for k, v in new.items() if k != FORMAT_KEY} == old
    assert Game.replay(operation_from_json(payload) for payload in rewritten) == game


def test_r25_every_earlier_format_has_an_upgrade_to_the_next() -> None:
    assert set(FORMAT_UPGRADES) == set(range(1, HISTORY_FORMAT))
