"""The inbox claims survive a database outage: a dropped claims connection is opened again."""

from __future__ import annotations

from contextlib import suppress

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.storage.claims import PostgresClaims


async def test_a_topic_can_be_claimed_again_after_the_database_dropped_the_claims_connection(
    engine: AsyncEngine,
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("claims are advisory locks on PostgreSQL only")
    woken: list[None] = []
    claims = PostgresClaims(engine)
    await claims.start(lambda: woken.append(None))
    try:
        assert await claims.try_topic((-5, 0))
        # The outage: the server resets every other connection, the claims one among them.
        async with engine.connect() as connection:
            await connection.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
        with suppress(Exception):  # the call the reset lands on may fail: none after it
            await claims.try_topic((-6, 0))
        assert await claims.try_topic((-5, 0)), (
            "the topic can be claimed again, on a new connection"
        )
        assert await claims.unprocessed([1]) == set()
        assert woken, "it looks for pending updates whose wake-ups it missed"
    finally:
        await claims.close()


async def test_the_readiness_ping_opens_a_dropped_claims_connection_again(
    engine: AsyncEngine,
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("claims are advisory locks on PostgreSQL only")
    claims = PostgresClaims(engine)
    await claims.start(lambda: None)
    try:
        async with engine.connect() as connection:
            claims_pid = await connection.scalar(
                text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'"
                )
            )
            assert claims_pid is not None, "the claims connection listens"
            await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": claims_pid})
        with suppress(Exception):  # the first use may meet the reset
            await claims.ping()
        await claims.ping()  # answers, on a new connection
        assert await claims.try_topic((-5, 0))
    finally:
        await claims.close()
