"""One asyncio lock per key (a chat topic, say), kept only while someone uses it."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Generic, TypeVar
from weakref import WeakValueDictionary

K = TypeVar("K", bound=Hashable)


class KeyedLocks(Generic[K]):
    """Hands out the same lock for a key while it is held or awaited, and forgets it after.

    Hold it only while using it (``async with locks.get(key):``), so keys seen once do not stay.
    """

    def __init__(self) -> None:
        self._locks: WeakValueDictionary[K, asyncio.Lock] = WeakValueDictionary()

    def get(self, key: K) -> asyncio.Lock:
        """The lock of ``key``."""
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def __len__(self) -> int:
        """How many keys have a lock in use."""
        return len(self._locks)
