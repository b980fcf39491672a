"""Shared database fixtures: every storage-backed test runs on SQLite and on PostgreSQL.

- ``database_url``: an empty database, once per backend (``sqlite`` always;
  ``postgresql`` when ``TELESNAP_TEST_POSTGRES_URL`` is set, else skipped).
- ``migrated_database_url``: the same, upgraded to the newest migration.
- ``engine`` / ``session_factory``: an engine on the migrated database (disposed
  after the test) and its session maker, for ``UnitOfWork(session_factory)``.

PostgreSQL tests run in a database of their own, created for the test session
and dropped after it; each test gets an empty ``public`` schema.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine as create_admin_engine
from sqlalchemy.pool import NullPool

from telesnap.config import normalize_database_url
from telesnap.storage.database import create_engine
from telesnap.storage.database import session_factory as make_session_factory
from telesnap.storage.migrate import upgrade_database

POSTGRES_URL_VARIABLE = "TELESNAP_TEST_POSTGRES_URL"
POSTGRES_SKIP_REASON = f"{POSTGRES_URL_VARIABLE} is not set"

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=pytest.mark.skipif(
            not os.environ.get(POSTGRES_URL_VARIABLE), reason=POSTGRES_SKIP_REASON
        ),
    ),
]


async def _run_admin_sql(url: str, *statements: str) -> None:
    engine = create_admin_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            for statement in statements:
                await connection.execute(text(statement))
    finally:
        await engine.dispose()


def _run_in_own_thread(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run ``coroutine`` in a fresh event loop of its own, whatever loop this thread runs."""
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="session")
def postgres_database_url() -> Iterator[str]:
    """A PostgreSQL database of this test session's own, dropped at the end."""
    server_url = os.environ.get(POSTGRES_URL_VARIABLE)
    if not server_url:
        pytest.skip(POSTGRES_SKIP_REASON)
    admin_url = normalize_database_url(server_url, variable=POSTGRES_URL_VARIABLE)
    name = f"telesnap_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    _run_in_own_thread(_run_admin_sql(admin_url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        _run_in_own_thread(
            _run_admin_sql(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        )


@pytest.fixture(params=BACKENDS)
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database: a fresh SQLite file, or an emptied PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'telesnap.db'}"
    url: str = request.getfixturevalue("postgres_database_url")
    await _run_admin_sql(url, "DROP SCHEMA IF EXISTS public CASCADE", "CREATE SCHEMA public")
    return url


@pytest.fixture
async def migrated_database_url(database_url: str) -> str:
    """The URL of an empty database upgraded to the newest migration."""
    await upgrade_database(database_url)
    return database_url


@pytest.fixture
async def engine(migrated_database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on the migrated database, disposed after the test."""
    database_engine = create_engine(migrated_database_url)
    try:
        yield database_engine
    finally:
        await database_engine.dispose()


@pytest.fixture
def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """The session maker on the migrated database: ``UnitOfWork(session_factory)``."""
    return make_session_factory(engine)
