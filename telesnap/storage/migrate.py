"""Alembic, driven from code: upgrade a database, and the environment ``env.py`` runs.

An upgrade takes a lock first (PostgreSQL: an advisory lock; SQLite: the write lock), so of
workers starting at once one migrates and the others find nothing left to do. On PostgreSQL
each table lock is awaited at most :data:`MIGRATION_LOCK_TIMEOUT_S`: one stuck behind a long
transaction would queue every query on that table behind it.
"""

from __future__ import annotations

import asyncio
import weakref
from logging.config import fileConfig
from pathlib import Path
from typing import Any, Literal

from alembic import command, context
from alembic.autogenerate.api import AutogenContext
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from ..config import ConfigError, PoolSettings, load_settings
from .database import connection_to, create_engine, describe_database
from .models import Base, UtcDateTime

__all__ = [
    "MigrationBlockedError",
    "alembic_config",
    "current_revision",
    "run_environment",
    "script_location",
    "upgrade_database",
]

_PACKAGE = Path(__file__).resolve().parents[1]
INSTALLED_SCRIPTS = _PACKAGE / "migrations"
"""Where a built wheel has the scripts (pyproject.toml maps ``migrations/`` there)."""
CHECKOUT_SCRIPTS = _PACKAGE.parent / "migrations"
"""Where a checkout (and the editable install, which imports from it) has them."""
_URL_ATTRIBUTE = "database_url"
_CONNECTION_ATTRIBUTE = "connection"
MIGRATION_LOCK_KEY = 0x7E1E5A4B
"""The PostgreSQL advisory lock key that upgrades take (any fixed 64-bit number)."""
MIGRATION_LOCK_TIMEOUT_S = 10.0
"""How long a migration on PostgreSQL waits for a table lock before it gives up."""
LOCK_NOT_AVAILABLE = "55P03"
"""PostgreSQL's SQLSTATE for a lock not taken within ``lock_timeout``."""
# Alembic keeps the running migration's context in a module global: one upgrade at a
# time per event loop (an asyncio lock, so that waiting never blocks the loop).
_IN_PROCESS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


class MigrationBlockedError(ConfigError):
    """A migration waited too long for a lock that another transaction holds; nothing changed."""


def script_location() -> Path:
    """Return the folder of the migration scripts: the wheel's copy, else the checkout's."""
    for folder in (INSTALLED_SCRIPTS, CHECKOUT_SCRIPTS):
        if (folder / "env.py").is_file():
            return folder
    raise FileNotFoundError(
        f"the migration scripts are missing: neither {INSTALLED_SCRIPTS} nor {CHECKOUT_SCRIPTS}"
    )


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    """Build the Alembic configuration in code; with ``connection``, migrate in its transaction."""
    config = Config()
    # Config values are interpolated: a "%" in the path must be doubled.
    config.set_main_option("script_location", str(script_location()).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    if url is not None:
        config.attributes[_URL_ATTRIBUTE] = url
    if connection is not None:
        config.attributes[_CONNECTION_ATTRIBUTE] = connection
    return config


async def upgrade_database(
    url: str, revision: str = "head", pool: PoolSettings | None = None
) -> None:
    """Run ``alembic upgrade <revision>`` on the database at ``url``, in one transaction.

    ``pool`` gives the connect timeout. A database that cannot be opened raises
    :class:`.DatabaseUnreachableError`; one that is not telesnap's, or is at a revision this
    telesnap does not know, :class:`~telesnap.config.ConfigError` (nothing is changed).
    """
    lock = _IN_PROCESS.setdefault(asyncio.get_running_loop(), asyncio.Lock())
    engine = create_engine(url, pool)
    try:
        async with lock, connection_to(engine) as connection, connection.begin():
            await connection.run_sync(_upgrade_on_connection, revision)
    except DBAPIError as error:
        if _sqlstate(error) == LOCK_NOT_AVAILABLE:
            raise MigrationBlockedError(
                f"the database migration waited {MIGRATION_LOCK_TIMEOUT_S:g} s for a table lock "
                "that another transaction holds, and changed nothing; end that transaction "
                "(see pg_stat_activity) and start again"
            ) from error
        raise
    finally:
        await engine.dispose()


def _sqlstate(error: DBAPIError) -> str | None:
    original = error.orig
    code = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return str(code) if code is not None else None


async def current_revision(url: str) -> str | None:
    """Return the revision the database at ``url`` is at (None if never migrated)."""
    engine = create_engine(url)
    try:
        async with connection_to(engine) as connection:
            return await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    finally:
        await engine.dispose()


def run_environment() -> None:
    """Run the migrations the way ``env.py`` must: online, offline, or on a given connection."""
    config = context.config
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    connection = config.attributes.get(_CONNECTION_ATTRIBUTE)
    if connection is not None:
        _run_on_connection(connection)
    elif context.is_offline_mode():
        _run_offline(_configured_url(config))
    else:
        asyncio.run(_run_online(_configured_url(config)))


def _upgrade_on_connection(connection: Connection, revision: str) -> None:
    _take_migration_lock(connection)
    if connection.dialect.name == "postgresql":  # after the advisory lock, which may wait long
        milliseconds = int(MIGRATION_LOCK_TIMEOUT_S * 1000)
        connection.execute(text(f"SET LOCAL lock_timeout = {milliseconds}"))
    config = alembic_config(connection=connection)
    _check_telesnaps(connection, ScriptDirectory.from_config(config))
    command.upgrade(config, revision)


def _check_telesnaps(connection: Connection, scripts: ScriptDirectory) -> None:
    """Refuse a database at a revision not in ``scripts``, or with tables but no revision."""
    where = describe_database(connection.engine.url)
    at = MigrationContext.configure(connection).get_current_heads()
    known = {script.revision for script in scripts.walk_revisions()}
    for head in at:
        if head not in known:
            raise ConfigError(
                f"{where} is at revision {head}, which this telesnap does not know:"
                " made by a newer version?"
            )
    if not at:
        ours = sorted(set(inspect(connection).get_table_names()) & set(Base.metadata.tables))
        if ours:
            raise ConfigError(
                f"{where} holds tables ({', '.join(ours)}) but no telesnap revision:"
                " it is not telesnap's database"
            )


def _take_migration_lock(connection: Connection) -> None:
    """Wait for any other upgrade of the database to finish (the lock lasts the transaction)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    else:
        # SQLite: the first statement begins the transaction with BEGIN IMMEDIATE.
        connection.execute(text("SELECT 1"))


def _migration_options(dialect_name: str) -> dict[str, Any]:
    return {
        "target_metadata": Base.metadata,
        "render_as_batch": dialect_name == "sqlite",
        "compare_type": True,
        "render_item": _render_item,
    }


def _render_item(kind: str, item: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Render our column types as plain SQLAlchemy ones: revisions must not import models."""
    if kind == "type" and isinstance(item, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configured_url(config: Config) -> str:
    url = config.attributes.get(_URL_ATTRIBUTE)
    if url is None:
        url = context.get_x_argument(as_dictionary=True).get("url")
    if url is None:
        url = config.get_main_option("sqlalchemy.url")
    if url is None:
        url = load_settings(require_token=False).database_url
    return str(url)


def _run_on_connection(connection: Connection) -> None:
    context.configure(connection=connection, **_migration_options(connection.dialect.name))
    with context.begin_transaction():
        context.run_migrations()


def _run_offline(url: str) -> None:
    engine = create_engine(url)
    context.configure(url=engine.url, literal_binds=True, **_migration_options(engine.dialect.name))
    with context.begin_transaction():
        context.run_migrations()


async def _run_online(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_run_on_connection)
    finally:
        await engine.dispose()
