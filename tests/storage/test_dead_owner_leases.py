"""A dead worker's chat leases end when it dies (its owner lock goes), not when they expire."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.services.outbox.leases import StoredLeases
from telesnap.services.outbox.service import DEFAULT_LEASE, OutboxService
from telesnap.storage.database import is_sqlite, session_factory
from telesnap.storage.liveness import PostgresLiveness
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

CHAT = -42
OWNER_CLASS = 0x7E1E_0005
"""The first key of an owner lock (storage/liveness.py)."""


@pytest.fixture
async def pg(engine: AsyncEngine) -> AsyncEngine:
    """The engine, PostgreSQL only (SQLite keeps its one process's leases in memory)."""
    if is_sqlite(engine):
        pytest.skip("one process on SQLite: its leases are kept in memory")
    return engine


@dataclass
class Worker:
    """A worker's outbox, and its sender leases as the outbox takes them before a send."""

    units: UnitsOfWork
    owner: str
    now: datetime
    leases: StoredLeases = field(default_factory=lambda: StoredLeases(live_owners=True))

    @property
    def outbox(self) -> OutboxService:
        return OutboxService(
            self.units, clock=lambda: self.now, owner=self.owner, leases=self.leases
        )

    async def claim(self, chat_id: int) -> bool:
        async with self.units() as uow:
            until = self.now + DEFAULT_LEASE
            return await self.leases.claim(uow, chat_id, self.owner, self.now, until)


@pytest.fixture
async def workers(pg: AsyncEngine) -> Callable[[str], Worker]:
    """Make a worker; the board waiting in the chat was committed a moment ago."""
    units = UnitsOfWork(session_factory(pg))
    async with UnitOfWork(session_factory(pg)) as uow:
        await uow.outbox.add(CHAT, 0, "notice", {"text": "hello"})
    later = datetime.now(UTC) + timedelta(seconds=1)  # the board is older than "now"
    return lambda owner: Worker(units, owner, later)


async def alive(engine: AsyncEngine, owner: str) -> PostgresLiveness:
    """A started worker's liveness, holding ``owner``'s owner lock."""
    liveness = PostgresLiveness(engine, owner)
    await liveness.start()
    await liveness.joined()
    return liveness


async def test_a_killed_workers_chat_is_taken_over_at_once_not_when_its_lease_lapses(
    pg: AsyncEngine, workers: Callable[[str], Worker]
) -> None:
    a, b = workers("worker-a"), workers("worker-b")
    a_alive, b_alive = await alive(pg, a.owner), await alive(pg, b.owner)
    try:
        assert await a.claim(CHAT), "a sends the chat"
        assert not await b.claim(CHAT), "a live worker's lease holds"
        assert await b.outbox.chats_waiting() == [], "a live worker's chat is not waiting"
        await a_alive.close()  # its connection closes, as with kill -9
        assert await b.outbox.chats_waiting() == [CHAT], "a dead worker's chat waits for a sender"
        assert await b.claim(CHAT), "and is taken over at once, its lease 30 s from lapsing"
        assert await b.outbox.chats_waiting() == []
    finally:
        await a_alive.close()
        await b_alive.close()


async def test_a_worker_that_looks_dead_takes_no_chat(
    pg: AsyncEngine, workers: Callable[[str], Worker]
) -> None:
    a = workers("worker-a")  # its liveness connection is gone (it never opened one)
    assert not await a.claim(CHAT), "the others would take it from a at once"
    assert await a.outbox.pending(CHAT) is None, "so a sends nothing"
    assert await a.outbox.chats_waiting() == [CHAT], "the chat is left to a live worker"


async def test_a_lost_liveness_connection_is_opened_again_with_the_owner_lock(
    pg: AsyncEngine, workers: Callable[[str], Worker]
) -> None:
    a, b = workers("worker-a"), workers("worker-b")
    a_alive = PostgresLiveness(pg, a.owner, check_every_s=0.05)
    await a_alive.start()
    await a_alive.joined()
    b_alive = await alive(pg, b.owner)
    try:
        assert await a.claim(CHAT)
        (lost,) = await _owner_lock_holders(pg, a.owner)
        async with pg.connect() as connection:  # the server drops a's connection
            await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": lost})
        await asyncio.wait_for(_owner_lock_held_again(pg, a.owner, lost), timeout=10)
        assert not await b.claim(CHAT), "a is back: its lease holds again"
        assert await a.claim(CHAT), "and a takes chats again"
    finally:
        await a_alive.close()
        await b_alive.close()


async def _owner_lock_holders(engine: AsyncEngine, owner: str) -> list[int]:
    """The server processes (connections) that hold ``owner``'s owner lock."""
    query = text(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = :owner_class"
        " AND objid = hashtext(:owner)::oid AND objsubid = 2 AND granted"
        # pg_locks shows every database's: other test sessions' workers share these names
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    async with engine.connect() as connection:
        return list(await connection.scalars(query, {"owner_class": OWNER_CLASS, "owner": owner}))


async def _owner_lock_held_again(engine: AsyncEngine, owner: str, lost: int) -> None:
    """Return once a connection other than ``lost`` holds ``owner``'s lock."""
    while True:
        if (await _owner_lock_holders(engine, owner)) not in ([], [lost]):
            return
        await asyncio.sleep(0.01)  # polling PostgreSQL's view, under the caller's timeout
