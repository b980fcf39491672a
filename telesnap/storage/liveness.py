"""Which workers are alive: a cold start (nobody else is) resumes, and answers owed to presses.

On PostgreSQL every live worker holds a *shared* session advisory lock on one
fixed key, on a connection it keeps for its life. A starting worker first tries
the *exclusive* lock on that key: if it gets it, no other worker is alive (a
*cold start*): it resumes the games, then takes the shared lock and gives the
exclusive one up. If it does not, others are alive (a *warm start*): it waits
for the shared lock (so for a cold start under way to finish its resume) and
leaves the games to the running workers. Two workers starting at once: one gets
the exclusive lock, so exactly one resumes. A killed worker's connection closes
with it, and PostgreSQL drops its locks at once (a whole host that vanishes
without closing its connections holds them until PostgreSQL's TCP keepalive
gives up on them).

The same connection holds the *pledges*: a worker that owes a press its answer
(the caller waits for a race this worker collects, or this worker answered it)
holds an advisory lock keyed on the press's query id until the press expires.
A worker that decides a race answers the callers nobody pledged to answer (their
worker died), and only those. With SQLite the bot is one process: every start is
cold and the pledges are a set in memory.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .database import is_sqlite

logger = logging.getLogger(__name__)

__all__ = ["LocalLiveness", "PostgresLiveness", "liveness_for"]

_LIVE_CLASS = 0x7E1E_0003
"""The first key of the workers' liveness lock (the second is 0)."""
_PLEDGE_CLASS = 0x7E1E_0004
"""The first key of a press's pledge (the second is a hash of its query id)."""


def _query_key(query_id: str) -> int:
    """A stable signed 32-bit key of a press's query id (two that collide share a pledge)."""
    folded = zlib.crc32(query_id.encode())
    return folded - (1 << 32) if folded >= 1 << 31 else folded


class LocalLiveness:
    """One process (SQLite): every start is cold, and the pledges are kept in memory."""

    shared = False
    """No other worker can take a press of this process's."""

    def __init__(self) -> None:
        self._pledged: set[str] = set()

    async def start(self) -> bool:
        """Nobody else runs on this database: a cold start."""
        return True

    async def joined(self) -> None:
        """Nothing to give up: the resume is done."""

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of press ``query_id``; False if it is taken already."""
        if query_id in self._pledged:
            return False
        self._pledged.add(query_id)
        return True

    async def release(self, query_id: str) -> None:
        """Let press ``query_id`` go (it expired)."""
        self._pledged.discard(query_id)

    async def close(self) -> None:
        """Forget every pledge."""
        self._pledged.clear()


class PostgresLiveness:
    """The liveness lock and the pledges, on one connection this worker keeps for its life."""

    shared = True
    """Other workers on the database may have taken calls of a race decided here."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None
        self._driver: Any = None
        self._lock = asyncio.Lock()
        self._exclusive = False

    async def start(self) -> bool:
        """Open the connection and join the live workers; True for a cold start.

        A cold start holds the exclusive lock until :meth:`joined`: every other
        worker starting meanwhile waits here for it.
        """
        self._connection = await self._engine.connect()
        raw = await self._connection.get_raw_connection()
        self._driver = raw.driver_connection
        async with self._lock:
            self._exclusive = bool(
                await self._driver.fetchval("SELECT pg_try_advisory_lock($1, 0)", _LIVE_CLASS)
            )
            if self._exclusive:
                return True
            logger.info("other workers are running: joining them (no resume)")
            # Waits while a cold start holds the exclusive lock, i.e. until it has resumed.
            await self._driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE_CLASS)
        return False

    async def joined(self) -> None:
        """After a cold start's resume: hold the shared lock, and let the others start."""
        async with self._lock:
            if not self._exclusive:
                return
            await self._driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE_CLASS)
            await self._driver.execute("SELECT pg_advisory_unlock($1, 0)", _LIVE_CLASS)
            self._exclusive = False

    async def _ask(self, query: str, key: int) -> bool:
        if self._driver is None:
            raise RuntimeError("the liveness connection is not open")
        async with self._lock:  # one connection: one query at a time
            return bool(await self._driver.fetchval(query, _PLEDGE_CLASS, key))

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of press ``query_id``; False if a live worker has it."""
        return await self._ask("SELECT pg_try_advisory_lock($1, $2)", _query_key(query_id))

    async def release(self, query_id: str) -> None:
        """Let press ``query_id`` go (it expired)."""
        await self._ask("SELECT pg_advisory_unlock($1, $2)", _query_key(query_id))

    async def close(self) -> None:
        """Leave the live workers: release every lock and close the connection for good."""
        connection, self._connection = self._connection, None
        driver, self._driver = self._driver, None
        if connection is None:
            return
        try:
            async with self._lock:
                await driver.execute("SELECT pg_advisory_unlock_all()")
        except Exception:
            logger.exception("could not release the liveness locks cleanly; dropping them")
        # Never back to the pool: a pooled connection must not carry locks.
        await connection.invalidate()
        await connection.close()


def liveness_for(engine: AsyncEngine) -> LocalLiveness | PostgresLiveness:
    """The liveness that suits the database: one process for SQLite, advisory locks for PG."""
    return LocalLiveness() if is_sqlite(engine) else PostgresLiveness(engine)
