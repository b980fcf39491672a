"""Shared database fixtures: every storage-backed test runs on SQLite and on PostgreSQL.

- ``database_url``: an empty database, once per backend (``sqlite`` always;
  ``postgresql`` when ``TELESNAP_TEST_POSTGRES_URL`` is set, else skipped).
- ``migrated_database_url``: the same, at the newest migration, with no rows.
- ``engine`` / ``session_factory``: an engine on the migrated database (disposed
  after the test) and its session maker, for ``UnitOfWork(session_factory)``.

The migrations run once per test session for the tests that do not test them:
on SQLite each test gets a copy of a template file migrated at the start; on
PostgreSQL the migrated schema stays and each test finds its tables emptied
(migrated again only if a test left the schema changed). Tests of the migrations
themselves take ``database_url`` and run them on the empty database.

PostgreSQL tests run in a database of their own, created for the test session
and dropped after it; a test asking for an empty one gets an empty ``public`` schema.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import threading
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine as create_admin_engine
from sqlalchemy.pool import NullPool

from telesnap.config import normalize_database_url
from telesnap.storage.database import create_engine
from telesnap.storage.database import session_factory as make_session_factory
from telesnap.storage.migrate import upgrade_database

# python-telegram-bot's durations as timedeltas, as telesnap.app opts in for the bot.
os.environ.setdefault("PTB_TIMEDELTA", "1")


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the commands the tests start, however the tests were started.

    A script's background job (``pytest &``) starts with SIGINT ignored, and every
    process it starts inherits that and keeps ignoring Ctrl-C, as it should. The tests
    that stop a command with SIGINT (tests/emulator/test_package.py,
    tests/sandbox/test_command.py) stand for a person pressing Ctrl-C at a terminal,
    where it is not ignored; started so, they waited for their timeout. So SIGINT is not
    ignored here either (in every xdist worker too).
    """
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


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


@pytest.fixture(scope="session")
def sqlite_template_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the newest revision once per test session, to be copied."""
    path = tmp_path_factory.mktemp("template") / "telesnap.db"
    _run_in_own_thread(upgrade_database(f"sqlite+aiosqlite:///{path}"))
    # The engine is disposed: the write-ahead log was folded into the file, which is whole.
    assert not path.with_name(f"{path.name}-wal").exists(), "the template's WAL is left over"
    return path


def _copy_file(template: Path, sqlite_url: str) -> None:
    target = Path(make_url(sqlite_url).database or "")
    assert not target.exists(), f"{target} exists before the test"
    shutil.copyfile(template, target)


class _PostgresSchema:
    """What the session's PostgreSQL ``public`` schema is known to hold between tests."""

    def __init__(self) -> None:
        self.migrated_fingerprint: str | None = None
        """The schema's fingerprint when it was last migrated to head (None: not migrated)."""


@pytest.fixture(scope="session")
def postgres_schema() -> _PostgresSchema:
    return _PostgresSchema()


# Tables, columns, indexes, constraints and the revision: whatever a migration changes.
_SCHEMA_FINGERPRINT = """
SELECT md5(coalesce((SELECT string_agg(t, ';' ORDER BY t) FROM (
    SELECT table_name || '.' || column_name || ':' || data_type || ':' || is_nullable
        || ':' || coalesce(column_default, '') AS t
      FROM information_schema.columns WHERE table_schema = 'public'
    UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
    UNION ALL SELECT conrelid::regclass::text || ':' || pg_get_constraintdef(c.oid)
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE n.nspname = 'public'
) AS parts), '')
|| coalesce((SELECT string_agg(version_num, ',') FROM public.alembic_version), ''))
"""

# The tables a test wrote to (the others are empty already: truncating them costs PostgreSQL
# a new file for each table and index), and every sequence a test drew from, back to its
# start: what TRUNCATE of every table with RESTART IDENTITY leaves, for far less work.
_EMPTY_EVERY_TABLE = """
DO $$ DECLARE table_name text; written boolean; names text; BEGIN
    FOR table_name IN SELECT tablename FROM pg_tables
                       WHERE schemaname = 'public' AND tablename <> 'alembic_version' LOOP
        EXECUTE format('SELECT EXISTS (SELECT FROM public.%I)', table_name) INTO written;
        IF written THEN
            names := concat_ws(', ', names, format('public.%I', table_name));
        END IF;
    END LOOP;
    IF names IS NOT NULL THEN
        EXECUTE 'TRUNCATE ' || names || ' CASCADE';
    END IF;
    PERFORM setval(format('%I.%I', schemaname, sequencename), start_value, false)
       FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL;
END $$
"""


async def _empty_migrated_postgres(url: str, schema: _PostgresSchema) -> None:
    """Leave the schema at head with no rows: emptied if a test left it so, else migrated."""
    known = schema.migrated_fingerprint
    if known is not None:
        engine = create_admin_engine(url, poolclass=NullPool)
        try:  # one connection: the check, then the emptying in the same transaction
            async with engine.begin() as connection:
                if await _fingerprint_on(connection) == known:
                    await connection.execute(text(_EMPTY_EVERY_TABLE))
                    return
        finally:
            await engine.dispose()
    schema.migrated_fingerprint = None
    await _run_admin_sql(url, "DROP SCHEMA IF EXISTS public CASCADE", "CREATE SCHEMA public")
    await upgrade_database(url)
    schema.migrated_fingerprint = await _schema_fingerprint(url)


async def _fingerprint_on(connection: AsyncConnection) -> str | None:
    tables = await connection.execute(
        text(
            "SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tablename = 'alembic_version'"
        )
    )
    if tables.first() is None:
        return None
    return str((await connection.execute(text(_SCHEMA_FINGERPRINT))).scalar_one())


async def _schema_fingerprint(url: str) -> str | None:
    engine = create_admin_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return await _fingerprint_on(connection)
    finally:
        await engine.dispose()


@pytest.fixture(params=BACKENDS)
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database: a fresh SQLite file, or an emptied PostgreSQL schema.

    A test that also asks for ``migrated_database_url`` gets that one's database
    (the same URL), which is the one at head.
    """
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'telesnap.db'}"
    url: str = request.getfixturevalue("postgres_database_url")
    if "migrated_database_url" not in request.fixturenames:
        schema: _PostgresSchema = request.getfixturevalue("postgres_schema")
        schema.migrated_fingerprint = None
        await _run_admin_sql(url, "DROP SCHEMA IF EXISTS public CASCADE", "CREATE SCHEMA public")
    return url


@pytest.fixture
async def migrated_database_url(request: pytest.FixtureRequest, database_url: str) -> str:
    """The URL of a database at the newest migration, with no rows (see the module's note)."""
    if database_url.startswith("sqlite"):
        _copy_file(request.getfixturevalue("sqlite_template_file"), database_url)
        return database_url
    await _empty_migrated_postgres(database_url, request.getfixturevalue("postgres_schema"))
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


@pytest.fixture
async def postgres_engine(
    postgres_database_url: str, postgres_schema: _PostgresSchema
) -> AsyncIterator[AsyncEngine]:
    """An engine on the migrated PostgreSQL database (skipped without one): several workers."""
    await _empty_migrated_postgres(postgres_database_url, postgres_schema)
    database_engine = create_engine(postgres_database_url)
    try:
        yield database_engine
    finally:
        await database_engine.dispose()


REAL_PROCESS_TESTS = ("tests/multiworker/", "tests/e2e/test_kill.py", "tests/e2e/test_spam.py")
"""The tests that start many real bot processes, or load the machine with fast play."""


@pytest.hookimpl(optionalhook=True)  # an xdist hook: the controller's scheduler
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadgroup`` (pyproject's addopts): REAL_PROCESS_TESTS are one group.

    One xdist worker runs them one after another, first (the largest group is handed out
    first), so they never compete with each other for the cores and their time guards
    hold; the other tests go, one at a time, to whichever worker is free. The group is
    made here from the tests' paths: xdist's own ``xdist_group`` marker renames the
    collected items, which pytest 9.2 no longer reads (xdist 3.8 groups nothing there).
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class RealProcessesTogether(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(REAL_PROCESS_TESTS):
                return "real-processes"
            return super()._split_scope(nodeid)

    return RealProcessesTogether(config, log)
