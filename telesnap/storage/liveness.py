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

The same connection also holds the worker's *owner lock*, keyed on the name it
leases chats under (its outbox owner): a chat's lease whose owner holds no such
lock is a dead worker's, and lapses at once (:func:`owner_alive`, checked in the
same SQL that takes or looks for chats). The lease's expiry stays the backstop.
A worker whose liveness connection is lost while it runs looks dead to the
others, so it takes no chat until it is back (the check also asks for the
claimer's own lock): it notices the loss within :data:`CHECK_EVERY_S`, opens a
new connection and takes its locks (and its pledges) again.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from typing import Any

from sqlalchemy import ColumnElement, cast, column, func, literal, literal_column, select, table
from sqlalchemy.dialects.postgresql import OID
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.orm import InstrumentedAttribute

from ..support.loops import BackgroundLoop
from ..support.retry import Backoff

logger = logging.getLogger(__name__)

__all__ = ["CHECK_EVERY_S", "LocalLiveness", "PostgresLiveness", "owner_alive"]

_LIVE_CLASS = 0x7E1E_0003
"""The first key of the workers' liveness lock (the second is 0)."""
_PLEDGE_CLASS = 0x7E1E_0004
"""The first key of a press's pledge (the second is a hash of its query id)."""
_OWNER_CLASS = 0x7E1E_0005
"""The first key of a worker's owner lock (the second is PostgreSQL's ``hashtext`` of the name)."""

CHECK_EVERY_S = 1.0
"""How often a worker makes sure its liveness connection is still there."""

_PG_LOCKS = table(
    "pg_locks",
    column("locktype"),
    column("database"),
    column("classid"),
    column("objid"),
    column("objsubid"),
    column("granted"),
)


def owner_alive(
    owner: ColumnElement[str] | InstrumentedAttribute[str] | str,
) -> ColumnElement[bool]:
    """SQL (PostgreSQL only): whether the worker that leases chats as ``owner`` is alive.

    True while some connection to this database holds ``owner``'s owner lock:
    two names whose hashes collide share it (a dead one may look alive, and its
    leases then lapse with their expiry, as before).
    """
    name = literal(owner) if isinstance(owner, str) else owner
    return (
        select(literal_column("1"))
        .select_from(_PG_LOCKS)
        .where(
            _PG_LOCKS.c.locktype == "advisory",
            _PG_LOCKS.c.database
            == literal_column("(SELECT oid FROM pg_database WHERE datname = current_database())"),
            _PG_LOCKS.c.classid == cast(literal(_OWNER_CLASS), OID),
            _PG_LOCKS.c.objid == cast(func.hashtext(name), OID),
            _PG_LOCKS.c.objsubid == 2,  # the two-key form
            _PG_LOCKS.c.granted,
        )
        .correlate_except(_PG_LOCKS)
        .exists()
    )


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
    """The liveness lock, the owner lock and the pledges, on one connection kept for life."""

    shared = True
    """Other workers on the database may have taken calls of a race decided here."""

    def __init__(
        self, engine: AsyncEngine, owner: str | None = None, check_every_s: float = CHECK_EVERY_S
    ) -> None:
        """Join the workers on ``engine``; ``owner``: the name this worker leases chats under."""
        self._engine = engine
        self._owner = owner
        self._check_every_s = check_every_s
        self._connection: AsyncConnection | None = None
        self._driver: Any = None
        self._lock = asyncio.Lock()
        self._exclusive = False
        self._pledged: set[str] = set()
        self._keeper = BackgroundLoop(
            self._keep,
            what="checking the liveness connection",
            logger=logger,
            backoff=Backoff(check_every_s, check_every_s),
        )

    async def start(self) -> bool:
        """Open the connection, take the owner lock, join the live workers; True: a cold start.

        A cold start holds the exclusive lock until :meth:`joined`: every other
        worker starting meanwhile waits here for it (holding its owner lock already).
        """
        self._connection, self._driver = await self._open()
        async with self._lock:
            await self._lock_owner(self._driver)
            self._exclusive = bool(
                await self._driver.fetchval("SELECT pg_try_advisory_lock($1, 0)", _LIVE_CLASS)
            )
            if not self._exclusive:
                logger.info("other workers are running: joining them (no resume)")
                # Waits while a cold start holds the exclusive lock, i.e. until it has resumed.
                await self._driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE_CLASS)
        self._keeper.start(first_after_s=self._check_every_s)
        return self._exclusive

    async def _open(self) -> tuple[AsyncConnection, Any]:
        connection = await self._engine.connect()
        raw = await connection.get_raw_connection()
        return connection, raw.driver_connection

    async def _lock_owner(self, driver: Any) -> None:
        if self._owner is not None:
            # Waits while a lost connection of this worker's still holds it on the server.
            await driver.execute(
                "SELECT pg_advisory_lock($1, hashtext($2))", _OWNER_CLASS, self._owner
            )

    async def joined(self) -> None:
        """After a cold start's resume: hold the shared lock, and let the others start."""
        async with self._lock:
            if not self._exclusive:
                return
            await self._driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE_CLASS)
            await self._driver.execute("SELECT pg_advisory_unlock($1, 0)", _LIVE_CLASS)
            self._exclusive = False

    async def _keep(self) -> float:
        """Check the connection (every ``check_every_s``); when it is lost, take the locks again."""
        try:
            async with self._lock:
                await self._driver.fetchval("SELECT 1", timeout=5 * self._check_every_s)
        except Exception:
            logger.warning(
                "the liveness connection is lost: this worker looks dead to the others"
                " and takes no chat until it is back",
                exc_info=True,
            )
            await self._reconnect()
        return self._check_every_s

    async def _reconnect(self) -> None:
        backoff = Backoff(self._check_every_s, max(self._check_every_s, 30.0))
        while True:
            await self._drop()
            try:
                self._connection, driver = await self._open()
                # Not under the lock: a pledge meanwhile fails at once on the lost connection.
                await driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE_CLASS)
                await self._lock_owner(driver)
                async with self._lock:
                    self._driver = driver
                    self._exclusive = False  # a cold start's resume (if any) ran meanwhile
                    for query_id in sorted(self._pledged):
                        await self._pledge_again(query_id)
                logger.info("the liveness connection is back: this worker takes chats again")
                return
            except Exception:
                delay = backoff.next()
                logger.exception(
                    "could not open the liveness connection again; retrying in %.1f s", delay
                )
                await asyncio.sleep(delay)

    async def _pledge_again(self, query_id: str) -> None:
        query = "SELECT pg_try_advisory_lock($1, $2)"
        if not await self._driver.fetchval(query, _PLEDGE_CLASS, _query_key(query_id)):
            self._pledged.discard(query_id)
            logger.warning(
                "press %s: another worker took its answer while this one looked dead", query_id
            )

    async def _drop(self) -> None:
        """Let the current connection go without giving its locks back (it is lost)."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            await connection.invalidate()  # never back to the pool
            await connection.close()
        except Exception:
            logger.warning("closing the lost liveness connection failed", exc_info=True)

    async def _ask(self, query: str, key: int) -> bool:
        if self._driver is None:
            raise RuntimeError("the liveness connection is not open")
        async with self._lock:  # one connection: one query at a time
            return bool(await self._driver.fetchval(query, _PLEDGE_CLASS, key))

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of press ``query_id``; False if a live worker has it."""
        pledged = await self._ask("SELECT pg_try_advisory_lock($1, $2)", _query_key(query_id))
        if pledged:
            self._pledged.add(query_id)
        return pledged

    async def release(self, query_id: str) -> None:
        """Let press ``query_id`` go (it expired)."""
        self._pledged.discard(query_id)
        await self._ask("SELECT pg_advisory_unlock($1, $2)", _query_key(query_id))

    async def close(self) -> None:
        """Leave the live workers: release every lock and close the connection for good."""
        await self._keeper.stop()
        self._pledged.clear()
        connection = self._connection
        driver, self._driver = self._driver, None
        if connection is None:
            return
        try:
            async with self._lock:
                await driver.execute("SELECT pg_advisory_unlock_all()")
        except Exception:
            logger.exception("could not release the liveness locks cleanly; dropping them")
        await self._drop()  # never back to the pool: a pooled connection must not carry locks
