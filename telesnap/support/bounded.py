"""A dict that keeps at most so many entries, forgetting the oldest first.

Every in-memory cache is bounded by one, so that none grows with the number of chats.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(MutableMapping[K, V]):
    """At most ``capacity`` entries: writing one makes it the newest, and the oldest go first.

    Reading leaves the order alone; :meth:`touch` makes an entry the newest. ``on_drop``
    hears only of entries dropped to keep the bound.

    >>> kept = BoundedDict[str, int](2)
    >>> kept["a"], kept["b"] = 1, 2
    >>> kept.touch("a")
    >>> kept["c"] = 3
    >>> sorted(kept)
    ['a', 'c']
    """

    def __init__(self, capacity: int, *, on_drop: Callable[[K, V], None] | None = None) -> None:
        if capacity < 0:
            raise ValueError("a bounded dict keeps at least no entries")
        self.capacity = capacity
        self._on_drop = on_drop
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __setitem__(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            dropped = self._entries.popitem(last=False)
            if self._on_drop is not None:
                self._on_drop(*dropped)

    def touch(self, key: K) -> None:
        """Make ``key`` the newest entry (it must be there)."""
        self._entries.move_to_end(key)

    def __getitem__(self, key: K) -> V:
        return self._entries[key]

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()

    def __delitem__(self, key: K) -> None:
        del self._entries[key]

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
