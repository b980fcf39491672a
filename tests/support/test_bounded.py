"""The bounded dict keeps its newest entries and forgets the oldest first."""

from __future__ import annotations

import pytest

from telesnap.support.bounded import BoundedDict


def test_it_keeps_at_most_its_capacity_dropping_the_oldest_first() -> None:
    kept = BoundedDict[int, str](3)
    for key in range(5):
        kept[key] = f"v{key}"
    assert list(kept.items()) == [(2, "v2"), (3, "v3"), (4, "v4")]


def test_writing_an_entry_again_makes_it_the_newest() -> None:
    kept = BoundedDict[str, int](2)
    kept["a"], kept["b"] = 1, 2
    kept["a"] = 3
    kept["c"] = 4
    assert dict(kept) == {"a": 3, "c": 4}


def test_reading_leaves_the_order_and_touch_changes_it() -> None:
    kept = BoundedDict[str, int](2)
    kept["a"], kept["b"] = 1, 2
    assert kept.get("a") == 1
    assert kept["a"] == 1
    assert "a" in kept
    kept["c"] = 3
    assert "a" not in kept, "a read does not keep an entry"
    kept.touch("b")
    kept["d"] = 4
    assert list(kept) == ["b", "d"]


def test_it_tells_what_the_bound_dropped_but_not_what_was_popped() -> None:
    dropped: list[tuple[str, int]] = []
    kept = BoundedDict[str, int](1, on_drop=lambda key, value: dropped.append((key, value)))
    kept["a"] = 1
    kept["b"] = 2
    assert kept.pop("b") == 2
    kept["c"] = 3
    del kept["c"]
    assert dropped == [("a", 1)]
    assert len(kept) == 0


def test_a_capacity_of_nothing_keeps_nothing_and_a_negative_one_is_refused() -> None:
    kept = BoundedDict[int, int](0)
    kept[1] = 1
    assert len(kept) == 0
    with pytest.raises(ValueError, match="at least no entries"):
        BoundedDict[int, int](-1)
