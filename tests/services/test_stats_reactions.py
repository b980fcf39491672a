"""The median cursor: exact median and best reaction times from a bounded read per game."""

from __future__ import annotations

import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from telesnap.services.stats.reactions import ReactionCursor, advance, window, window_size

games = st.lists(
    st.lists(st.integers(min_value=0, max_value=3000), max_size=12), min_size=1, max_size=30
)


@settings(max_examples=300, deadline=None)
@given(games)
def test_the_cursor_gives_the_exact_median_and_best_after_every_game(
    batches: list[list[int]],
) -> None:
    counts: Counter[int] = Counter()
    cursor = ReactionCursor()
    every: list[int] = []
    for batch in batches:
        counts.update(batch)
        every += batch
        at_or_above, below = window(counts, cursor, batch)
        assert len(at_or_above) <= window_size(len(batch))
        assert len(below) <= window_size(len(batch))
        cursor = advance(cursor, batch, at_or_above, below)
        assert cursor.calls == len(every)
        if every:
            assert cursor.median_ms == int(statistics.median(every))
            assert cursor.best_ms == min(every)
            ranked = sorted(every)
            assert cursor.lower_median_ms == ranked[(len(every) - 1) // 2]
            assert cursor.faster_calls == sum(t < ranked[(len(every) - 1) // 2] for t in every)
        else:
            assert cursor == ReactionCursor()


def test_a_window_too_small_is_an_error_not_a_wrong_median() -> None:
    counts = Counter([100, 200, 300, 400, 500])
    cursor = advance(
        ReactionCursor(),
        [100, 200, 300, 400, 500],
        *window(counts, ReactionCursor(), [100, 200, 300, 400, 500]),
    )
    assert cursor.median_ms == 300
    counts.update([900, 901, 902, 903])
    with pytest.raises(ValueError, match="window_size"):
        advance(cursor, [900, 901, 902, 903], [(300, 1)], [])
