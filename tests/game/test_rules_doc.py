"""RULES.md: every numbered rule has a test named after it in tests/game."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rule_numbers() -> list[int]:
    text = (ROOT / "RULES.md").read_text(encoding="utf-8")
    return [int(number) for number in re.findall(r"^#+ R(\d+)\b", text, flags=re.MULTILINE)]


def rules_with_tests() -> set[int]:
    names = "\n".join(
        path.read_text(encoding="utf-8") for path in (ROOT / "tests" / "game").glob("test_*.py")
    )
    return {int(number) for number in re.findall(r"def test_r(\d+)_", names)}


def test_rules_are_numbered_r1_upwards_without_gaps() -> None:
    numbers = rule_numbers()
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 20


def test_every_rule_has_a_test_named_after_it() -> None:
    missing = set(rule_numbers()) - rules_with_tests()
    assert not missing, f"rules without a test_r<N>_ test: {sorted(missing)}"


def test_every_rule_test_names_a_rule_that_exists() -> None:
    unknown = rules_with_tests() - set(rule_numbers())
    assert not unknown, f"tests named after rules RULES.md does not have: {sorted(unknown)}"
