"""Exact median and best reaction times, kept up to date in constant time per game.

Times are stored as counts per whole millisecond, and a player's totals keep a cursor (the
lower middle value and how many calls were faster). A game adding ``n`` calls moves the
middle by at most ``n`` ranks, so only :func:`window_size` buckets each side are read.

>>> first, counts = [300, 200, 500], {300: 1, 200: 1, 500: 1}
>>> cursor = advance(ReactionCursor(), first, *window(counts, ReactionCursor(), first))
>>> cursor.median_ms, cursor.best_ms, cursor.calls, cursor.lower_median_ms, cursor.faster_calls
(300, 200, 3, 300, 1)
>>> counts[900] = 1
>>> cursor = advance(cursor, [900], *window(counts, cursor, [900]))
>>> cursor.median_ms, cursor.lower_median_ms
(400, 300)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .figures import median_ms

__all__ = ["Bucket", "ReactionCursor", "advance", "anchor_of", "window", "window_size"]

Bucket = tuple[int, int]
"""``(reaction_ms, calls)``: how many calls took exactly that many milliseconds."""


@dataclass(frozen=True, slots=True)
class ReactionCursor:
    """A player's reaction-time figures and where their median sits in their counts."""

    calls: int = 0
    lower_median_ms: int | None = None
    """The reaction time at rank ``(calls - 1) // 2`` (None with no calls)."""
    faster_calls: int = 0
    """How many calls were faster than ``lower_median_ms``."""
    median_ms: int | None = None
    best_ms: int | None = None


def window_size(new_calls: int) -> int:
    """How many buckets to read on each side of the anchor after adding ``new_calls`` calls."""
    return new_calls + 2


def anchor_of(cursor: ReactionCursor, new_times: Sequence[int]) -> int:
    """The reaction time to read the counts around (they include ``new_times``, never empty)."""
    if cursor.lower_median_ms is None:
        return min(new_times)
    return cursor.lower_median_ms


def advance(
    cursor: ReactionCursor,
    new_times: Sequence[int],
    at_or_above: Sequence[Bucket],
    below: Sequence[Bucket],
) -> ReactionCursor:
    """The figures after adding ``new_times`` (already counted in the buckets given).

    ``at_or_above``: buckets from :func:`anchor_of` up, fastest first; ``below``: under it,
    slowest first; each at most :func:`window_size` long.
    """
    if not new_times:
        return cursor
    anchor = anchor_of(cursor, new_times)
    faster = cursor.faster_calls if cursor.lower_median_ms is not None else 0
    faster += sum(time < anchor for time in new_times)
    buckets = [*reversed(below), *at_or_above]
    rank = faster - sum(calls for _, calls in below)
    total = cursor.calls + len(new_times)
    lower_rank, upper_rank = (total - 1) // 2, total // 2
    lower: Bucket | None = None
    upper: int | None = None
    for reaction_ms, calls in buckets:
        if lower is None and rank <= lower_rank < rank + calls:
            lower = (reaction_ms, rank)
        if rank <= upper_rank < rank + calls:
            upper = reaction_ms
            break
        rank += calls
    if lower is None or upper is None:
        raise ValueError("the buckets read do not reach the median: read window_size() of them")
    best = min(new_times) if cursor.best_ms is None else min(cursor.best_ms, *new_times)
    return ReactionCursor(
        calls=total,
        lower_median_ms=lower[0],
        faster_calls=lower[1],
        median_ms=median_ms([lower[0], upper]),
        best_ms=best,
    )


def window(
    counts: Mapping[int, int], cursor: ReactionCursor, new_times: Sequence[int]
) -> tuple[list[Bucket], list[Bucket]]:
    """The buckets :func:`advance` needs, from counts in memory (the repository reads the same)."""
    if not new_times:
        return [], []
    anchor = anchor_of(cursor, new_times)
    size = window_size(len(new_times))
    ordered = sorted(counts.items())
    at_or_above = [bucket for bucket in ordered if bucket[0] >= anchor][:size]
    below = [bucket for bucket in reversed(ordered) if bucket[0] < anchor][:size]
    return at_or_above, below
