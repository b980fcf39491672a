"""Two changes of a chat's settings at once both survive (PostgreSQL, READ COMMITTED).

A change reads the chat's stored values, sets one and writes them all back. The
test holds the first change between its read and its write while the second one
reads: unless the read locks the row, the second reads the values without the
first's change and writes them back over it.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.storage.uow import UnitOfWork

CHAT = -300
Factory = async_sessionmaker[AsyncSession]


# A lock waited for by a connection to this database (pg_locks shows every database's; a
# row lock's wait may be on a transaction id, which names no database).
_WAITING_HERE = text(
    "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE NOT l.granted AND a.datname = current_database()"
)


async def _blocked_on_a_lock(engine: AsyncEngine) -> None:
    """Return once some transaction waits for a row lock."""
    async with engine.connect() as connection:
        while not await connection.scalar(_WAITING_HERE):
            await connection.rollback()  # a fresh snapshot of pg_locks each round
            await asyncio.sleep(0.01)  # pg_locks has no event to wait on


async def test_two_changes_at_once_of_different_settings_both_survive(
    engine: AsyncEngine, session_factory: Factory
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writing transaction at a time (BEGIN IMMEDIATE)")
    async with UnitOfWork(session_factory) as uow:
        await uow.chats.upsert(CHAT, "group", "Club")
    first_read = asyncio.Event()
    second_read = asyncio.Event()
    release_first = asyncio.Event()

    async def change(setting: str, value: int, read: asyncio.Event, hold: bool) -> None:
        async with UnitOfWork(session_factory) as uow:
            stored = await uow.settings.values_to_change(CHAT)
            read.set()
            if hold:
                await release_first.wait()
            stored[setting] = value
            await uow.settings.save_values(CHAT, 0, stored)

    first = asyncio.create_task(change("tie_window_ms", 250, first_read, hold=True))
    await first_read.wait()
    second = asyncio.create_task(change("penalty", 0, second_read, hold=False))
    waits = [
        asyncio.create_task(second_read.wait()),
        asyncio.create_task(_blocked_on_a_lock(engine)),
    ]
    async with asyncio.timeout(10):  # a failure guard, not a measure
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    release_first.set()
    await asyncio.gather(first, second)

    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await uow.settings.get_values(CHAT) == {"tie_window_ms": 250, "penalty": 0}
