"""Several workers on PostgreSQL: advisory locks and LISTEN on one connection per worker.

Every claim, lease and pledge is a session-level advisory lock on one connection kept out of
the pool for the worker's life (it also LISTENs for wake-ups): a worker killed with ``-9``
loses it, and PostgreSQL releases all it held at once.

Live workers each hold a shared lock on one key; a starting worker that gets the exclusive
lock is alone (a cold start) and resumes the games before :meth:`PostgresCoordination.joined`
lets the others in. On a lost connection the worker forgets its locks at once (so it sends no
chat it no longer holds), takes back what is still free, then looks for pending updates, as
the wake-ups sent meanwhile were missed. Chat flood-limit windows are shared by
compare-and-swap (:meth:`~PostgresCoordination.swap_pace`), so workers count each other's sends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ..storage.models import InboxUpdate, OutboxSender
from ..storage.repositories import INBOX_CHANNEL, OUTBOX_CHANNEL, StoredElsewhere
from ..support.loops import BackgroundLoop
from ..support.retry import Backoff

logger = logging.getLogger(__name__)

__all__ = ["CHECK_EVERY_S", "PostgresCoordination"]

CHECK_EVERY_S = 1.0
"""How often a worker checks its coordination connection (and counts the live workers)."""
BOT_WINDOW_S = 1.0
"""Telegram's bot-wide flood window (30 messages in any second): a joining worker waits it, and
the others' shares grow only once it has passed since a worker left."""

_TOPIC = 0x7E1E_0001
"""The first key of a topic's claim (the second is a hash of the topic)."""
_CALL = 0x7E1E_0002
"""The first key of a call's claim (the second is its update_id, folded to 32 bits)."""
_LIVE = 0x7E1E_0003
"""The first key of the liveness lock (the second is 0)."""
_PLEDGE = 0x7E1E_0004
"""The first key of a press's pledge (the second is a hash of its query id)."""
_CHAT = 0x7E1E_0006
"""The first key of a chat's sender lease (the second is the chat id, folded to 32 bits)."""

Key = tuple[int, int]

_TRY = "SELECT pg_try_advisory_lock($1, $2)"
_UNLOCK = "SELECT pg_advisory_unlock($1, $2)"
_UNPROCESSED = (
    f"SELECT update_id FROM {InboxUpdate.__tablename__} "
    "WHERE update_id = ANY($1::bigint[]) AND processed_at IS NULL"
)
_LIVE_WORKERS = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND classid = $1::bigint::oid AND objid = 0 AND objsubid = 2"
)
_LOAD_PACE = f"SELECT pace FROM {OutboxSender.__tablename__} WHERE chat_id = $1"
_SWAP_PACE = (
    f"INSERT INTO {OutboxSender.__tablename__} AS s (chat_id, pace) VALUES ($1, $2::json)"
    " ON CONFLICT (chat_id) DO UPDATE SET pace = EXCLUDED.pace"
    " WHERE (s.pace ->> 'v') IS NOT DISTINCT FROM $3 RETURNING 1"
)


def _int32(value: int) -> int:
    """``value`` folded into a signed 32-bit integer (an advisory lock key)."""
    folded = value & 0xFFFF_FFFF
    return folded - (1 << 32) if folded >= 1 << 31 else folded


def _hash32(text: str) -> int:
    """A stable 32-bit key of ``text`` (two that collide share a lock)."""
    return _int32(zlib.crc32(text.encode()))


def claim_of_topic(topic: tuple[int, int]) -> Key:
    """The claim of a topic's line.

    >>> claim_of_topic((-100, 0)) == claim_of_topic((-100, 0)) != claim_of_topic((-100, 1))
    True
    """
    return (_TOPIC, _hash32(f"{topic[0]}:{topic[1]}"))


class PostgresCoordination:
    """The coordination of one worker among several (see the module)."""

    shared = True

    def __init__(
        self,
        engine: AsyncEngine,
        check_every_s: float = CHECK_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._origin = uuid.uuid4().hex
        self._connection: AsyncConnection | None = None
        self._driver: Any = None
        self._lock = asyncio.Lock()
        """One connection: one query at a time."""
        self._recovering = asyncio.Lock()
        self._wake: Callable[[StoredElsewhere | None], None] | None = None
        self._rows_written: Callable[[int], None] = lambda chat: None
        self._running = False
        """Between :meth:`start` and :meth:`close`: a lost connection is opened again."""
        self._held: set[Key] = set()
        """The claims, leases and pledges held now (claims taken again after a reconnect)."""
        self._lost = False
        """Whether the connection was lost and is not back yet (said once)."""
        self._exclusive = False
        self._workers = 1
        self._check_every_s = check_every_s
        self._clock = clock
        self._quiet_until = 0.0
        """A worker that joined others sends nothing before this (see :meth:`bot_share`)."""
        self._fewer_since: float | None = None
        """When fewer live workers were first counted: the shares grow a window later."""
        self._own_backends: set[int] = set()
        """The server pids of this worker's connections: the outbox wake-ups they send are its
        own, and its senders were woken in process already (``OutboxService.on_rows``)."""
        for name, listener in self._POOL_EVENTS:
            event.listen(engine.sync_engine, name, getattr(self, listener))
        self._keeper = BackgroundLoop(
            self._check,
            what="checking the coordination connection",
            logger=logger,
            backoff=Backoff(check_every_s, max(check_every_s, 30.0)),
        )

    _POOL_EVENTS = (("connect", "_connected"), ("close", "_disconnected"))

    def _connected(self, connection: Any, _record: Any) -> None:
        self._own_backends.add(connection.driver_connection.get_server_pid())

    def _disconnected(self, connection: Any, _record: Any) -> None:
        with suppress(Exception):  # a connection lost with its server has no pid to give
            self._own_backends.discard(connection.driver_connection.get_server_pid())

    @property
    def origin(self) -> str:
        """A name of this worker, random per start: the payload of its stores' NOTIFYs."""
        return self._origin

    async def start(
        self,
        wake: Callable[[StoredElsewhere | None], None],
        rows_written: Callable[[int], None] = lambda chat: None,
    ) -> bool:
        """Open the connection, LISTEN, join the live workers; True: a cold start (see module)."""
        self._wake = wake
        self._rows_written = rows_written
        self._running = True
        async with self._lock:
            driver = await self._open()
            self._exclusive = bool(
                await driver.fetchval("SELECT pg_try_advisory_lock($1, 0)", _LIVE)
            )
            if not self._exclusive:
                logger.info("other workers are running: joining them (no resume)")
                # Waits while a cold start holds the exclusive lock, i.e. until it has resumed.
                await driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE)
                # Its share from its first send: counted alone, the shares would add up to more.
                self._workers = max(1, int(await driver.fetchval(_LIVE_WORKERS, _LIVE) or 1))
                self._quiet_until = self._clock() + self._check_every_s + BOT_WINDOW_S
        self._keeper.start(first_after_s=self._check_every_s)
        return self._exclusive

    async def joined(self) -> None:
        """After a cold start's resume: hold the shared lock, and let the others start."""
        async with self._lock:
            if not self._exclusive:
                return
            await self._driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE)
            await self._driver.execute("SELECT pg_advisory_unlock($1, 0)", _LIVE)
            self._exclusive = False

    async def _open(self) -> Any:
        self._connection = await self._engine.connect()
        raw = await self._connection.get_raw_connection()
        self._driver = raw.driver_connection
        await self._driver.add_listener(INBOX_CHANNEL, self._notified)
        await self._driver.add_listener(OUTBOX_CHANNEL, self._row_notified)
        return self._driver

    def _notified(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        if self._wake is None:
            return
        stored = StoredElsewhere.parse(payload)
        if stored is None:
            logger.warning("an inbox wake-up naming no update: %r; looking at the inbox", payload)
            self._wake(None)
        elif stored.origin != self._origin:  # ours went to our dispatcher directly
            self._wake(stored)

    def _row_notified(self, _connection: object, pid: int, _channel: str, payload: str) -> None:
        if pid in self._own_backends:
            return
        try:
            chat_id = int(payload)
        except ValueError:
            logger.warning("an outbox wake-up with a payload that is no chat: %r", payload)
            return
        self._rows_written(chat_id)

    async def _query(self, method: str, query: str, *args: Any) -> Any:
        """Run a query on the connection; a lost connection is opened again and asked once more."""
        try:
            return await self._run(method, query, args)
        except Exception:
            if self._driver is not None and not self._driver.is_closed():
                raise  # the query failed, not the connection
        await self._recover()
        return await self._run(method, query, args)

    async def _run(self, method: str, query: str, args: tuple[Any, ...]) -> Any:
        async with self._lock:
            if self._driver is None:
                raise ConnectionError("the coordination connection is not open")
            return await getattr(self._driver, method)(query, *args)

    async def _try(self, key: Key) -> bool:
        if key in self._held:
            return False  # held here already: one taker per key, in this process too
        taken = bool(await self._query("fetchval", _TRY, *key))
        if taken:
            self._held.add(key)
        return taken

    async def _release(self, key: Key) -> None:
        if key in self._held:
            self._held.discard(key)
            await self._query("fetchval", _UNLOCK, *key)

    async def try_topic(self, topic: tuple[int, int]) -> bool:
        """Claim a topic's line (two topics whose hashes collide share one)."""
        return await self._try(claim_of_topic(topic))

    async def release_topic(self, topic: tuple[int, int]) -> None:
        """Give a topic's line back."""
        await self._release(claim_of_topic(topic))

    async def try_call(self, update_id: int) -> bool:
        """Claim one call."""
        return await self._try((_CALL, _int32(update_id)))

    async def release_call(self, update_id: int) -> None:
        """Give a call back."""
        await self._release((_CALL, _int32(update_id)))

    async def unprocessed(self, update_ids: Sequence[int]) -> set[int]:
        """Those still pending, read on this connection (no transaction of the pool's)."""
        rows = await self._query("fetch", _UNPROCESSED, list(update_ids))
        return {int(row[0]) for row in rows}

    async def try_chat(self, chat_id: int) -> bool:
        """Lease a chat's sending."""
        return await self._try((_CHAT, _int32(chat_id)))

    async def release_chat(self, chat_id: int) -> None:
        """Give a chat's lease back."""
        await self._release((_CHAT, _int32(chat_id)))

    def holds_chat(self, chat_id: int) -> bool:
        """Whether this worker still holds the chat's lease (a lost connection lost it)."""
        return (_CHAT, _int32(chat_id)) in self._held

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of press ``query_id``; False if a live worker has it."""
        return await self._try((_PLEDGE, _hash32(query_id)))

    async def release_pledge(self, query_id: str) -> None:
        """Let press ``query_id`` go."""
        await self._release((_PLEDGE, _hash32(query_id)))

    async def load_pace(self, chat_id: int) -> dict[str, Any]:
        """The chat's stored flood-limit state (empty: none yet)."""
        stored = await self._query("fetchval", _LOAD_PACE, chat_id)
        return dict(stored) if isinstance(stored, dict) else {}

    async def swap_pace(self, chat_id: int, seen: dict[str, Any], new: dict[str, Any]) -> bool:
        """Store ``new`` if the stored state is still the version ``seen`` has (one statement)."""
        version = seen.get("v")
        new = {**new, "v": (int(version) if version is not None else 0) + 1}
        swapped = await self._query(
            "fetchval",
            _SWAP_PACE,
            chat_id,
            json.dumps(new),
            None if version is None else str(version),
        )
        if swapped:
            seen.clear()
            seen.update(new)
        return bool(swapped)

    def bot_share(self) -> float:
        """An even share of the bot-wide limit among the live workers (counted every second).

        None (0) for a worker that just joined others, until each of them has counted it and
        sent within its smaller share for a whole window: only then do the shares add up to
        the whole, where the others' last second may hold what their old shares let them send.
        Likewise a worker gone (killed mid-burst) leaves its last window's sends counting at
        Telegram: the others' shares grow one window after they count fewer.
        """
        if self._clock() < self._quiet_until:
            return 0.0
        return 1.0 / max(1, self._workers)

    async def ping(self) -> None:
        """Check that the connection answers (``/ready``)."""
        await self._query("fetchval", "SELECT 1")

    async def _check(self) -> float:
        """Count the live workers (a lost connection is opened again on the way)."""
        count = max(1, int(await self._query("fetchval", _LIVE_WORKERS, _LIVE) or 1))
        now = self._clock()
        if count >= self._workers:
            self._workers, self._fewer_since = count, None
        elif self._fewer_since is None:  # one gone may have sent its share in its last window
            self._fewer_since = now
        elif now - self._fewer_since >= BOT_WINDOW_S:  # that window is over at Telegram too
            self._workers, self._fewer_since = count, None
        return self._check_every_s

    async def _recover(self) -> None:
        """The connection is lost: forget what it held, open a new one, take back the claims."""
        async with self._recovering:
            if not self._running:
                raise ConnectionError("the coordination connection is not open (not started)")
            if self._driver is not None and not self._driver.is_closed():
                return  # opened again meanwhile
            held, self._held = self._held, set()  # gone with the connection: send none of it
            if not self._lost:  # said once an outage, not at each attempt to open a new one
                logger.warning(
                    "the coordination connection is lost: its claims, leases and pledges are"
                    " gone until it is back; opening a new one"
                )
            self._lost = True
            async with self._lock:
                await self._drop()
                driver = await self._open()
                await driver.execute("SELECT pg_advisory_lock_shared($1, 0)", _LIVE)
                self._exclusive = False  # a cold start's resume (if any) ran meanwhile
                lost = 0
                # A chat's lease is not taken back: another worker may have sent there meanwhile,
                # so the sender takes it anew (holds_chat says it lost it) and reads what was sent.
                for key in sorted(key for key in held if key[0] != _CHAT):
                    if await driver.fetchval(_TRY, *key):
                        self._held.add(key)
                    else:
                        lost += 1
            if lost:
                logger.warning(
                    "after the reconnect, %d claims or pledges are another worker's", lost
                )
            logger.info("the coordination connection is back")
            self._lost = False
            if self._wake is not None:
                self._wake(None)  # wake-ups sent while it was away were missed: look now

    async def _drop(self) -> None:
        """Let the connection go without giving its locks back (it is lost, or closing)."""
        connection, self._connection, self._driver = self._connection, None, None
        if connection is None:
            return
        with suppress(Exception):
            await connection.invalidate()  # never back to the pool: it carries locks
            await connection.close()

    async def close(self) -> None:
        """Release every lock, stop listening, close the connection for good."""
        self._running = False
        for name, listener in self._POOL_EVENTS:
            if event.contains(self._engine.sync_engine, name, getattr(self, listener)):
                event.remove(self._engine.sync_engine, name, getattr(self, listener))
        await self._keeper.stop()
        self._held.clear()
        async with self._lock:
            driver = self._driver
            if driver is not None and not driver.is_closed():
                try:
                    await driver.remove_listener(INBOX_CHANNEL, self._notified)
                    await driver.remove_listener(OUTBOX_CHANNEL, self._row_notified)
                    await driver.execute("SELECT pg_advisory_unlock_all()")
                except Exception:
                    logger.exception("could not release the advisory locks cleanly; dropping them")
            await self._drop()
