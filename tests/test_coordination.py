"""How workers share the work: claims, chat leases, pledges and liveness, on one connection each.

Most checks run on both kinds: SQLite's one process (everything in memory) and
PostgreSQL's workers (advisory locks that go with the worker's connection).
"""

from __future__ import annotations

import asyncio
from contextlib import suppress

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.coordination import PostgresCoordination, coordination_for
from telesnap.coordination.postgres import BOT_WINDOW_S
from telesnap.services.outbox.rows import NOTICE
from telesnap.storage.database import create_engine, is_sqlite, session_factory
from telesnap.storage.uow import UnitsOfWork


async def started(engine: AsyncEngine, check_every_s: float = 1.0) -> PostgresCoordination:
    """A worker's coordination on ``engine``, joined."""
    coordination = PostgresCoordination(engine, check_every_s=check_every_s)
    await coordination.start(lambda stored: None)
    await coordination.joined()
    return coordination


async def test_one_taker_for_each_topic_call_chat_and_pledge(engine: AsyncEngine) -> None:
    coordination = coordination_for(engine)
    assert isinstance(coordination, PostgresCoordination) != is_sqlite(engine), "by the database"
    await coordination.start(lambda stored: None)
    try:
        assert await coordination.try_topic((-5, 0))
        assert not await coordination.try_topic((-5, 0)), "taken already"
        assert await coordination.try_topic((-5, 1)), "another topic of the chat"
        await coordination.release_topic((-5, 0))
        assert await coordination.try_topic((-5, 0)), "given back: free again"
        assert await coordination.try_chat(-5)
        assert not await coordination.try_chat(-5)
        await coordination.release_chat(-5)
        assert await coordination.try_chat(-5)
        assert await coordination.try_call(12)
        assert not await coordination.try_call(12)
        assert await coordination.pledge("q1")
        assert not await coordination.pledge("q1")
        assert coordination.holds_chat(-5)
    finally:
        await coordination.close()


async def test_a_start_is_cold_only_while_no_other_worker_is_alive(
    postgres_engine: AsyncEngine,
) -> None:
    first = PostgresCoordination(postgres_engine)
    assert await first.start(lambda stored: None) is True, "nobody else on the database"
    await first.joined()
    second = PostgresCoordination(postgres_engine)
    assert await second.start(lambda stored: None) is False, "the first is alive"
    await second.joined()
    await first.close()
    third = PostgresCoordination(postgres_engine)
    assert await third.start(lambda stored: None) is False, "the second is still alive"
    await third.close()
    await second.close()
    last = PostgresCoordination(postgres_engine)
    assert await last.start(lambda stored: None) is True, "everyone left"
    await last.close()


async def test_of_two_starting_at_once_one_is_cold_and_the_other_waits_for_its_resume(
    postgres_engine: AsyncEngine,
) -> None:
    cold, warm = PostgresCoordination(postgres_engine), PostgresCoordination(postgres_engine)
    assert await cold.start(lambda stored: None) is True
    joining = asyncio.create_task(warm.start(lambda stored: None))
    await asyncio.wait_for(_someone_waits_for_an_advisory_lock(postgres_engine), timeout=10)
    assert not joining.done(), "a warm start waits while a cold start resumes"
    await cold.joined()
    assert await joining is False
    await asyncio.gather(cold.close(), warm.close())


async def test_a_dead_workers_leases_claims_and_pledges_are_free_at_once(
    postgres_engine: AsyncEngine,
) -> None:
    a, b = await started(postgres_engine), await started(postgres_engine)
    try:
        assert await a.try_chat(-42)
        assert await a.try_topic((-42, 0))
        assert await a.pledge("q")
        assert not await b.try_chat(-42), "a live worker's lease holds"
        assert not await b.try_topic((-42, 0))
        assert not await b.pledge("q")
        await a.close()  # its connection closes, as with kill -9
        assert await b.try_chat(-42), "taken over at once"
        assert await b.try_topic((-42, 0))
        assert await b.pledge("q")
    finally:
        await a.close()
        await b.close()


async def test_each_worker_takes_an_even_share_of_the_bot_wide_limit(
    postgres_engine: AsyncEngine,
) -> None:
    workers = [await started(postgres_engine, check_every_s=0.05) for _ in range(3)]
    try:
        await asyncio.wait_for(_share_is(workers[0], 1 / 3), timeout=10)
        await workers.pop().close()
        await asyncio.wait_for(_share_is(workers[0], 1 / 2), timeout=10)
    finally:
        for worker in workers:
            await worker.close()


async def test_a_worker_joining_others_keeps_its_share_from_its_first_send(
    postgres_engine: AsyncEngine,
) -> None:
    now = [1000.0]
    first = await started(postgres_engine, check_every_s=1.0)
    second = PostgresCoordination(postgres_engine, check_every_s=1.0, clock=lambda: now[0])
    await second.start(lambda stored: None)
    try:
        assert first.bot_share() == 1.0, "alone until its next count"
        assert second.bot_share() == 0.0, "nothing while the first may still send at 30 a second"
        now[0] += 1.0 + BOT_WINDOW_S  # the first has counted it, and a window has passed since
        assert second.bot_share() == pytest.approx(1 / 2), "counted before its first send"
    finally:
        await second.close()
        await first.close()


async def test_a_dropped_connection_is_opened_again_with_what_it_held(
    postgres_engine: AsyncEngine,
) -> None:
    woken: list[None] = []
    a = PostgresCoordination(postgres_engine, check_every_s=0.05)
    await a.start(lambda stored: woken.append(stored))
    await a.joined()
    b = await started(postgres_engine)
    try:
        assert await a.try_chat(-42)
        assert await a.try_topic((-7, 0))
        await _server_drops_the_connection_of(a, postgres_engine)
        with suppress(Exception):  # the query the reset lands on may fail: none after it
            await a.ping()
        await asyncio.wait_for(_woken(woken), timeout=10)
        assert not await b.try_topic((-7, 0)), "a took its claim back (nobody took it meanwhile)"
        assert not a.holds_chat(-42), "a chat's lease is taken anew by its sender, not back"
        assert await a.try_chat(-42)
        assert await a.unprocessed([1]) == set(), "and answers queries on the new connection"
    finally:
        await a.close()
        await b.close()


async def test_a_lease_another_worker_took_while_the_connection_was_lost_is_not_held(
    postgres_engine: AsyncEngine,
) -> None:
    a = PostgresCoordination(postgres_engine, check_every_s=60.0)
    await a.start(lambda stored: None)
    await a.joined()
    b = await started(postgres_engine)
    try:
        assert await a.try_chat(-42)
        await _server_drops_the_connection_of(a, postgres_engine)
        assert await b.try_chat(-42), "the lease went with a's connection"
        with suppress(Exception):
            await a.ping()
        await a.ping()
        assert not a.holds_chat(-42), "a sends nothing of a chat it lost"
    finally:
        await a.close()
        await b.close()


async def _server_drops_the_connection_of(
    coordination: PostgresCoordination, engine: AsyncEngine
) -> None:
    """End the coordination connection's backend, and return once it is gone (its locks too).

    Without the wait (PostgreSQL 14's timeout argument), the backend may still be
    ending, its advisory locks still held, when the caller looks at them.
    """
    pid = int(await coordination._query("fetchval", "SELECT pg_backend_pid()"))
    async with engine.connect() as connection:
        ended = await connection.scalar(
            text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": pid}
        )
    assert ended, f"backend {pid} did not end within 10 s"


async def _someone_waits_for_an_advisory_lock(engine: AsyncEngine) -> None:
    """Return once PostgreSQL shows an advisory lock asked for and not granted."""
    query = text(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database ="
        " (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    while True:
        async with engine.connect() as connection:
            if await connection.scalar(query):
                return
        await asyncio.sleep(0.01)  # polling PostgreSQL's view, under the caller's timeout


async def _share_is(coordination: PostgresCoordination, share: float) -> None:
    while coordination.bot_share() != pytest.approx(share):  # noqa: ASYNC110 (a count, no event)
        await asyncio.sleep(0.01)


async def _woken(woken: list[None]) -> None:
    while not woken:  # noqa: ASYNC110 (set by a callback)
        await asyncio.sleep(0.01)


async def test_a_worker_is_woken_by_the_outbox_rows_of_others_not_by_its_own(
    postgres_engine: AsyncEngine, postgres_database_url: str
) -> None:
    other = create_engine(postgres_database_url)  # another worker: a pool of its own
    woken: list[int] = []
    others_came = asyncio.Event()

    def rows_written(chat_id: int) -> None:
        woken.append(chat_id)
        if chat_id == -2:
            others_came.set()

    coordination = PostgresCoordination(postgres_engine)
    await coordination.start(lambda: None, rows_written)
    try:
        await _write_a_row(postgres_engine, chat_id=-1)  # its own (woken in process)
        await _write_a_row(other, chat_id=-2)
        await asyncio.wait_for(others_came.wait(), 10)  # the wake-ups come in commit order
        assert woken == [-2]
    finally:
        await coordination.close()
        await other.dispose()


async def _write_a_row(engine: AsyncEngine, chat_id: int) -> None:
    async with UnitsOfWork(session_factory(engine))() as uow:
        await uow.outbox.add(chat_id, 0, NOTICE, {"notice": {"kind": "test", "details": {}}})


async def test_shares_grow_a_window_after_a_worker_is_gone(postgres_engine: AsyncEngine) -> None:
    """A worker killed mid-burst sent its share in its last second, which still counts at
    Telegram: the others keep their smaller shares until that window is over."""
    now = [1000.0]
    survivor = PostgresCoordination(postgres_engine, check_every_s=3600.0, clock=lambda: now[0])
    await survivor.start(lambda stored: None)
    await survivor.joined()
    gone = await started(postgres_engine)
    try:
        await survivor._check()
        assert survivor.bot_share() == pytest.approx(1 / 2)
        await gone.close()
        await survivor._check()
        assert survivor.bot_share() == pytest.approx(1 / 2), "its last window still counts"
        now[0] += BOT_WINDOW_S
        await survivor._check()
        assert survivor.bot_share() == 1.0
    finally:
        await survivor.close()
