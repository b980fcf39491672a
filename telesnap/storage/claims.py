"""Claims on the inbox's pending updates: in memory (SQLite), or PostgreSQL advisory locks.

A worker takes a topic's line, or a single Snap call, under a claim. On
PostgreSQL a claim is a session-level advisory lock on one connection the
worker keeps for the purpose: a worker killed with ``-9`` loses that
connection, and PostgreSQL releases its claims at once. The same connection
LISTENs for the NOTIFY that storing updates sends (see ``InboxRepository.store``),
so the other workers are woken, not polling. With SQLite the bot is one process:
the claims are a set in memory and the wake-up is a direct call.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import zlib
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .models import InboxUpdate
from .repositories import INBOX_CHANNEL

logger = logging.getLogger(__name__)

__all__ = ["LocalClaims", "PostgresClaims"]

_TOPIC_CLASS = 0x7E1E_0001
"""The first key of a topic's advisory lock (the second is a hash of the topic)."""
_CALL_CLASS = 0x7E1E_0002
"""The first key of a call's advisory lock (the second is its update_id, folded to 32 bits)."""


_UNPROCESSED = (
    f"SELECT update_id FROM {InboxUpdate.__tablename__} "
    "WHERE update_id = ANY($1::bigint[]) AND processed_at IS NULL"
)


def _int32(value: int) -> int:
    """``value`` folded into a signed 32-bit integer (an advisory lock key)."""
    folded = value & 0xFFFF_FFFF
    return folded - (1 << 32) if folded >= 1 << 31 else folded


def _topic_hash(topic: tuple[int, int]) -> int:
    """A stable 32-bit key of a topic (chat id, thread id): two that collide share a line."""
    chat_id, thread_id = topic
    return _int32(zlib.crc32(f"{chat_id}:{thread_id}".encode()))


class LocalClaims:
    """Claims for one process: a set of what is taken."""

    def __init__(self) -> None:
        self._topics: set[tuple[int, int]] = set()
        self._calls: set[int] = set()

    @property
    def origin(self) -> str:
        """No other process to tell apart from."""
        return ""

    async def start(self, wake: Callable[[], None]) -> None:
        """Nothing to listen to: the process that stores an update wakes its own dispatcher."""

    async def unprocessed(self, update_ids: Sequence[int]) -> set[int]:
        """All of them: in one process only the dispatcher that stored them takes them."""
        return set(update_ids)

    async def try_topic(self, topic: tuple[int, int]) -> bool:
        """Claim a topic's line."""
        key = (topic[0], topic[1])
        if key in self._topics:
            return False
        self._topics.add(key)
        return True

    async def release_topic(self, topic: tuple[int, int]) -> None:
        """Give a topic's line back."""
        self._topics.discard((topic[0], topic[1]))

    async def try_call(self, update_id: int) -> bool:
        """Claim one call."""
        if update_id in self._calls:
            return False
        self._calls.add(update_id)
        return True

    async def release_call(self, update_id: int) -> None:
        """Give a call back."""
        self._calls.discard(update_id)

    async def ping(self) -> None:
        """The claims are in this process's memory: always there."""

    async def close(self) -> None:
        """Forget every claim."""
        self._topics.clear()
        self._calls.clear()


class PostgresClaims:
    """Claims held as advisory locks on a connection of this worker, which also LISTENs."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None
        self._driver: Any = None
        self._lock = asyncio.Lock()
        self._wake: Callable[[], None] | None = None
        self._origin = uuid.uuid4().hex
        self._started = False

    @property
    def origin(self) -> str:
        """A name of this worker, random per start: the payload of its NOTIFYs."""
        return self._origin

    async def start(self, wake: Callable[[], None]) -> None:
        """Open the claims connection and LISTEN on the inbox's channel."""
        self._wake = wake
        self._started = True
        await self._open()

    async def _open(self) -> None:
        self._connection = await self._engine.connect()
        raw = await self._connection.get_raw_connection()
        self._driver = raw.driver_connection
        await self._driver.add_listener(INBOX_CHANNEL, self._notified)

    async def _connected(self) -> Any:
        """The claims connection, opened again if the database dropped it (its claims went with it).

        Called under ``self._lock``.
        """
        if self._driver is not None and not self._driver.is_closed():
            return self._driver
        if not self._started:
            raise RuntimeError("the claims connection is not open")
        logger.warning("the inbox claims connection was lost; opening a new one")
        connection, self._connection, self._driver = self._connection, None, None
        if connection is not None:
            with suppress(Exception):
                await connection.invalidate()
        await self._open()
        if self._wake is not None:
            self._wake()  # wake-ups sent while it was away were missed: look now
        return self._driver

    def _notified(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        # Our own stores were handed to our dispatcher directly: no sweep for them.
        if self._wake is not None and payload != self._origin:
            self._wake()

    async def unprocessed(self, update_ids: Sequence[int]) -> set[int]:
        """Those still pending, read on the claims connection (no transaction of the pool's)."""
        async with self._lock:
            driver = await self._connected()
            rows = await driver.fetch(_UNPROCESSED, list(update_ids))
        return {int(row[0]) for row in rows}

    async def _ask(self, query: str, first: int, second: int) -> bool:
        async with self._lock:  # one connection: one query at a time
            driver = await self._connected()
            return bool(await driver.fetchval(query, first, second))

    async def try_topic(self, topic: tuple[int, int]) -> bool:
        """Claim a topic's line (a hash of the topic as the lock's key)."""
        key = _topic_hash(topic)
        return await self._ask("SELECT pg_try_advisory_lock($1, $2)", _TOPIC_CLASS, key)

    async def release_topic(self, topic: tuple[int, int]) -> None:
        """Give a topic's line back."""
        key = _topic_hash(topic)
        await self._ask("SELECT pg_advisory_unlock($1, $2)", _TOPIC_CLASS, key)

    async def try_call(self, update_id: int) -> bool:
        """Claim one call."""
        return await self._ask(
            "SELECT pg_try_advisory_lock($1, $2)", _CALL_CLASS, _int32(update_id)
        )

    async def release_call(self, update_id: int) -> None:
        """Give a call back."""
        await self._ask("SELECT pg_advisory_unlock($1, $2)", _CALL_CLASS, _int32(update_id))

    async def ping(self) -> None:
        """Check that the claims connection answers, opening it again if it was dropped."""
        async with self._lock:
            driver = await self._connected()
            await driver.fetchval("SELECT 1")

    async def close(self) -> None:
        """Release every claim, stop listening, and close the connection for good."""
        self._started = False
        connection, self._connection = self._connection, None
        driver, self._driver = self._driver, None
        if connection is None:
            return
        try:
            async with self._lock:
                await driver.remove_listener(INBOX_CHANNEL, self._notified)
                await driver.execute("SELECT pg_advisory_unlock_all()")
        except Exception:
            logger.exception("could not release the inbox claims cleanly; dropping the connection")
        # Never back to the pool: a pooled connection must not carry locks or listeners.
        await connection.invalidate()
        await connection.close()
