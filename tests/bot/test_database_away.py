"""PostgreSQL refusing connections (a restart, a failover, connections switched off) is the
database being away: the update is run again, not answered with a failure at once."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from telesnap.bot.handlers.errors import is_transient_database_error
from telesnap.config import normalize_database_url
from telesnap.storage.database import create_engine

from ..conftest import POSTGRES_SKIP_REASON, POSTGRES_URL_VARIABLE, _run_admin_sql

pytestmark = pytest.mark.skipif(
    not os.environ.get(POSTGRES_URL_VARIABLE), reason=POSTGRES_SKIP_REASON
)


@pytest.fixture
async def database() -> AsyncIterator[tuple[str, str]]:
    """A database of this test's own: (the server's admin URL, the database's URL)."""
    admin = normalize_database_url(os.environ[POSTGRES_URL_VARIABLE], variable="test")
    name = f"telesnap_away_{uuid.uuid4().hex[:8]}"
    await _run_admin_sql(admin, f'CREATE DATABASE "{name}"')
    try:
        yield admin, make_url(admin).set(database=name).render_as_string(hide_password=False)
    finally:
        await _run_admin_sql(
            admin,
            f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true',
            f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
        )


async def _failure_of(url: str) -> DBAPIError:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except DBAPIError as error:
        return error
    finally:
        await engine.dispose()
    raise AssertionError("the database answered")


async def test_a_database_not_accepting_connections_is_away(database: tuple[str, str]) -> None:
    admin, url = database
    name = make_url(url).database
    await _run_admin_sql(admin, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
    error = await _failure_of(url)
    assert "not currently accepting connections" in str(error)
    assert is_transient_database_error(error)


async def test_a_connection_the_server_ended_is_away(database: tuple[str, str]) -> None:
    admin, url = database
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            pid = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            await _run_admin_sql(admin, f"SELECT pg_terminate_backend({pid})")
            with pytest.raises(DBAPIError) as raised:
                await connection.execute(text("SELECT 1"))
    finally:
        await engine.dispose()
    assert is_transient_database_error(raised.value)


async def test_a_statement_the_database_refuses_is_not_away(database: tuple[str, str]) -> None:
    engine = create_engine(database[1])
    try:
        async with engine.connect() as connection:
            with pytest.raises(DBAPIError) as raised:
                await connection.execute(text("SELECT * FROM no_such_table"))
    finally:
        await engine.dispose()
    assert not is_transient_database_error(raised.value)
