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

NEEDS_POSTGRESQL = pytest.mark.skipif(
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


@NEEDS_POSTGRESQL
async def test_a_database_not_accepting_connections_is_away(database: tuple[str, str]) -> None:
    admin, url = database
    name = make_url(url).database
    await _run_admin_sql(admin, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
    error = await _failure_of(url)
    assert "not currently accepting connections" in str(error)
    assert is_transient_database_error(error)


@NEEDS_POSTGRESQL
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


@NEEDS_POSTGRESQL
async def test_a_statement_the_database_refuses_is_not_away(database: tuple[str, str]) -> None:
    engine = create_engine(database[1])
    try:
        async with engine.connect() as connection:
            with pytest.raises(DBAPIError) as raised:
                await connection.execute(text("SELECT * FROM no_such_table"))
    finally:
        await engine.dispose()
    assert not is_transient_database_error(raised.value)


class _RefusalError(Exception):
    """What asyncpg raises, as SQLAlchemy's adapter keeps it: its text and its SQLSTATE."""

    def __init__(self, text: str, sqlstate: str) -> None:
        super().__init__(text)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("text", "sqlstate", "away"),
    [
        ("the database system is starting up", "57P03", True),
        ("sorry, too many clients already", "53300", True),
        ("cannot execute UPDATE in a read-only transaction", "25006", True),
        ("deadlock detected", "40P01", True),
        ('currval of sequence "games_id_seq" is not yet defined in this session', "55000", False),
        ("temporary file size exceeds temp_file_limit", "53400", False),
        ("protocol violation", "08P01", False),
    ],
)
def test_only_a_server_away_or_busy_is_run_again(text: str, sqlstate: str, away: bool) -> None:
    error = DBAPIError("SELECT 1", None, _RefusalError(text, sqlstate))
    assert is_transient_database_error(error) is away
