"""Liveness: a start is cold only when no other worker is alive on the database."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.coordination import coordination_for
from telesnap.storage.database import is_sqlite, session_factory
from telesnap.storage.liveness import LocalLiveness, PostgresLiveness
from telesnap.storage.uow import UnitsOfWork


async def test_a_start_is_cold_only_while_no_other_worker_is_alive(engine: AsyncEngine) -> None:
    first = _liveness(engine)
    assert await first.start() is True, "nobody else on the database"
    await first.joined()
    if is_sqlite(engine):
        await first.close()
        pytest.skip("one process on SQLite: every start is cold")
    second = _liveness(engine)
    assert await second.start() is False, "the first is alive"
    await second.joined()
    await first.close()
    third = _liveness(engine)
    assert await third.start() is False, "the second is still alive"
    await third.close()
    await second.close()
    last = _liveness(engine)
    assert await last.start() is True, "everyone left"
    await last.close()


async def test_of_two_starting_at_once_one_is_cold_and_the_other_waits_for_its_resume(
    engine: AsyncEngine,
) -> None:
    if is_sqlite(engine):
        pytest.skip("one process on SQLite")
    cold, warm = _liveness(engine), _liveness(engine)
    assert await cold.start() is True
    joining = asyncio.create_task(warm.start())
    await asyncio.wait_for(_someone_waits_for_an_advisory_lock(engine), timeout=10)
    assert not joining.done(), "a warm start waits while a cold start resumes"
    await cold.joined()
    assert await joining is False
    await asyncio.gather(cold.close(), warm.close())


async def test_a_pledge_is_held_by_one_worker_until_released(engine: AsyncEngine) -> None:
    if is_sqlite(engine):
        pytest.skip("one process on SQLite")
    one, other = _liveness(engine), _liveness(engine)
    await one.start()
    await one.joined()
    await other.start()
    try:
        assert await one.pledge("press-1")
        assert not await other.pledge("press-1"), "a live worker has it"
        await one.release("press-1")
        assert await other.pledge("press-1")
    finally:
        await one.close()
        await other.close()


async def _someone_waits_for_an_advisory_lock(engine: AsyncEngine) -> None:
    """Return once PostgreSQL shows an advisory lock asked for and not granted."""
    query = text(  # in this database (pg_locks shows every database's)
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    while True:
        async with engine.connect() as connection:
            if await connection.scalar(query):
                return
        await asyncio.sleep(0.01)  # polling PostgreSQL's view, under the caller's timeout


def _liveness(engine: AsyncEngine) -> LocalLiveness | PostgresLiveness:
    return coordination_for(engine, UnitsOfWork(session_factory(engine))).liveness()
