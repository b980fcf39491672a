"""Engine and session set-up for SQLite (aiosqlite) and PostgreSQL (asyncpg).

SQLite write transactions start with ``BEGIN IMMEDIATE`` (sent by SQLAlchemy, not the driver),
so writers serialise from their first statement instead of failing at their first write;
read-only ones use a deferred ``BEGIN``, a WAL snapshot that neither waits for nor holds up a
writer. Both engines hide statement parameters in errors and logs: they hold names and payloads.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
)
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine
from sqlalchemy.pool import AsyncAdaptedQueuePool

from ..config import ConfigError, PoolSettings, normalize_database_url
from . import sqlite_driver

__all__ = [
    "READ_ONLY_OPTION",
    "SQLITE_BUSY_TIMEOUT_MS",
    "DatabaseUnreachableError",
    "connection_to",
    "create_engine",
    "database_answers",
    "describe_database",
    "read_only_options",
    "session_factory",
    "sqlite_failure",
]

READ_ONLY_OPTION = "telesnap_read_only"
"""The execution option that marks a connection's transactions as read-only."""
SQLITE_BUSY_TIMEOUT_MS = 5000
_SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
)
POOL_RECYCLE_S = 1800
"""PostgreSQL connections older than this are replaced when next checked out."""


def create_engine(url: str, pool: PoolSettings | None = None) -> AsyncEngine:
    """Create the async engine for ``url`` (plain ``sqlite://``/``postgresql://`` are mapped).

    ``pool`` sizes PostgreSQL's pool; SQLite always has one connection.
    """
    async_url = make_url(normalize_database_url(url, variable="the database URL"))
    if async_url.get_backend_name() == "sqlite":
        # One connection: SQLite runs one write transaction at a time anyway, and
        # waiting for the connection in asyncio beats SQLite's busy-wait sleeps.
        arguments, options = async_url.get_dialect()().create_connect_args(async_url)
        engine = _create_async_engine(
            async_url,
            async_creator=partial(_connect_sqlite, *arguments, **options),
            hide_parameters=True,  # a failed statement's log shows no names or payloads
            poolclass=AsyncAdaptedQueuePool,  # a pool of the one connection, never NullPool
            pool_size=1,
            max_overflow=0,
            pool_timeout=60,
        )
        _configure_sqlite(engine)
        return engine
    pool = pool or PoolSettings()
    return _create_async_engine(
        async_url,
        pool_size=pool.size,
        max_overflow=pool.max_overflow,
        pool_timeout=pool.timeout_s,
        # No ping on every checkout (a round trip per transaction); connections are
        # recycled instead, and a dropped one fails a single update.
        pool_pre_ping=False,
        pool_recycle=POOL_RECYCLE_S,
        connect_args={"timeout": pool.connect_timeout_s},  # asyncpg's connect timeout
        hide_parameters=True,  # a failed statement's log shows no names or payloads
    )


class DatabaseUnreachableError(ConfigError):
    """The database cannot be opened; the message says which one and what to check."""


def describe_database(url: str | URL) -> str:
    """Name a database for a person: its SQLite file, or PostgreSQL's host, port and name.

    >>> describe_database("sqlite+aiosqlite:///games/x.db")
    'the SQLite file games/x.db'
    >>> describe_database("postgresql+asyncpg://bot:secret@db.example:5433/snap")
    'the PostgreSQL database snap at db.example:5433'
    """
    parsed = make_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            return "an in-memory SQLite database"
        return f"the SQLite file {parsed.database}"
    server = "PostgreSQL" if parsed.get_backend_name() == "postgresql" else parsed.drivername
    where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
    if not parsed.database:
        return f"the {server} server at {where}"
    return f"the {server} database {parsed.database} at {where}"


def _reason(error: BaseException) -> str:
    cause = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    return (str(cause).strip().splitlines() or [type(cause).__name__])[0]


def sqlite_failure(url: URL, error: BaseException) -> DatabaseUnreachableError | None:
    """What to tell of a SQLite file SQLite would not use: held, full, or no file (else None).

    Opening it, or migrating it (the file grows), meets these: one line says what to check.
    """
    reason = _reason(error)
    where = describe_database(url)
    if reason == "database is locked":
        return DatabaseUnreachableError(
            f"cannot use {where} ({reason}): another process holds it (another telesnap running"
            " on this file?)"
        )
    if "disk is full" in reason:
        return DatabaseUnreachableError(
            f"cannot write {where} ({reason}): check the free space on its disk and the file's"
            " size limits"
        )
    if "disk I/O error" in reason:
        return DatabaseUnreachableError(
            f"cannot write {where} ({reason}): check the free space on its disk and the file's"
            " size limits, and that its folder is on a local file system (SQLite's write-ahead"
            " log needs file locking and shared memory, which network folders may lack)"
        )
    if url.database and Path(url.database).is_dir():
        return DatabaseUnreachableError(f"cannot open {where}: it is a folder, not a file")
    return None


def _unreachable(url: URL, error: BaseException) -> DatabaseUnreachableError:
    reason = _reason(error)
    if url.get_backend_name() == "sqlite":
        folder = Path(url.database or ".").parent
        if not folder.is_dir():
            return DatabaseUnreachableError(
                f"cannot open {describe_database(url)}: the folder {folder} does not exist"
            )
        if "not a database" in reason:  # SQLite's own words for a file of another kind
            return DatabaseUnreachableError(
                f"cannot open {describe_database(url)}: it is not a SQLite database ({reason})"
            )
        return sqlite_failure(url, error) or DatabaseUnreachableError(
            f"cannot open {describe_database(url)} ({reason}): check that the folder "
            "lets this user write there"
        )
    return DatabaseUnreachableError(
        f"cannot connect to {describe_database(url)} ({reason}): check that the server runs "
        "there, and the user, password and database name in the URL"
    )


@asynccontextmanager
async def connection_to(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """Connect to ``engine``; only failing to open it raises :class:`DatabaseUnreachableError`."""
    connection = engine.connect()
    try:
        await connection.start()
    except (DBAPIError, OSError, TimeoutError) as error:
        raise _unreachable(engine.url, error) from None
    try:
        yield connection
    finally:
        await connection.close()


async def _connect_sqlite(*arguments: Any, **options: Any) -> Any:
    """Connect to SQLite; a file this creates gets 0600 (its -wal and -shm files inherit it)."""
    path = str(arguments[0]) if arguments else ""
    in_memory = not path or path == ":memory:" or path.startswith("file:")
    existed = in_memory or _exists(path)  # a stat, once per connection (there is one)
    connection = await sqlite_driver.connect(*arguments, **options)
    if not existed and _exists(path):
        os.chmod(path, 0o600)
    return connection


def _exists(path: str) -> bool:
    return os.path.exists(path)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Return the session maker telesnap uses: objects stay usable after commit."""
    return async_sessionmaker(engine, expire_on_commit=False)


def read_only_options(dialect_name: str) -> dict[str, bool]:
    """The execution options of a connection whose transactions only read."""
    if dialect_name == "postgresql":
        return {READ_ONLY_OPTION: True, "postgresql_readonly": True}
    return {READ_ONLY_OPTION: True}


async def database_answers(engine: AsyncEngine) -> None:
    """Run one trivial read-only query on ``engine``; raise if the database does not answer."""
    async with engine.connect() as connection:
        await connection.execution_options(**read_only_options(engine.dialect.name))
        await connection.execute(text("SELECT 1"))


def is_sqlite(engine: AsyncEngine) -> bool:
    """Whether ``engine`` talks to SQLite."""
    return engine.dialect.name == "sqlite"


def _configure_sqlite(engine: AsyncEngine) -> None:
    event.listen(engine.sync_engine, "connect", _prepare_sqlite_connection)
    event.listen(engine.sync_engine, "begin", _begin)


def _prepare_sqlite_connection(dbapi_connection: Any, _connection_record: Any) -> None:
    # Stop the driver from emitting its own (deferred) BEGIN: SQLAlchemy emits it below.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        for pragma in _SQLITE_PRAGMAS:
            cursor.execute(pragma)
    finally:
        cursor.close()


def _begin(connection: Connection) -> None:
    if connection.get_execution_options().get(READ_ONLY_OPTION):
        connection.exec_driver_sql("BEGIN")  # deferred: a snapshot, never the write lock
    else:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
