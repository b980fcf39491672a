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
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import DBAPIError, OperationalError

from ..config import ConfigError, PoolSettings, load_settings
from .database import connection_to, create_engine, describe_database, sqlite_failure
from .models import Base, UtcDateTime

__all__ = [
    "DatabasePrivilegeError",
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
INSUFFICIENT_PRIVILEGE = "42501"
"""PostgreSQL's SQLSTATE for a statement the user has no privilege for."""
TABLE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")
"""What the bot does to every one of its tables."""
# Alembic keeps the running migration's context in a module global: one upgrade at a
# time per event loop (an asyncio lock, so that waiting never blocks the loop).
_IN_PROCESS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


class MigrationBlockedError(ConfigError):
    """A migration waited too long for a lock that another transaction holds; nothing changed."""


class DatabasePrivilegeError(ConfigError):
    """The database's user may not do what telesnap needs there; nothing changed."""


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
    telesnap does not know, :class:`~telesnap.config.ConfigError`; on PostgreSQL, a user that
    cannot migrate it, or cannot read and write every table the bot uses,
    :class:`DatabasePrivilegeError` (nothing is changed). The bot starts with an upgrade, so it
    learns this at start, not at its first update.
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
        if _sqlstate(error) == INSUFFICIENT_PRIVILEGE:
            raise _cannot_migrate(engine.url, error) from None
        failure = sqlite_failure(engine.url, error) if engine.dialect.name == "sqlite" else None
        if failure is not None:
            raise failure from None
        raise
    finally:
        await engine.dispose()


def _owner_remedy(url: URL) -> str:
    user = url.username or "USER"
    database = url.database or "DATABASE"
    return (
        f"make {user} the database's owner (createdb -O {user} {database}, or"
        f" ALTER DATABASE {database} OWNER TO {user})"
    )


def _cannot_migrate(url: URL, error: DBAPIError) -> DatabasePrivilegeError:
    """Say which database refused a migration, what the user lacks, and how to give it."""
    reason = (str(error.orig).strip().splitlines() or ["permission denied"])[0]
    user = f"the user {url.username}" if url.username else "the user"
    lacks = (
        "cannot create tables in schema public"
        if "schema" in reason
        else "cannot use telesnap's tables"
    )
    return DatabasePrivilegeError(
        f"{describe_database(url)} refused the migration ({reason}): {user} {lacks}:"
        f" {_owner_remedy(url)}, or run telesnap db upgrade as the owner"
    )


def _sqlstate(error: DBAPIError) -> str | None:
    original = error.orig
    code = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return str(code) if code is not None else None


async def current_revision(url: str) -> str | None:
    """Return the revision the database at ``url`` is at (None if never migrated).

    It only reads: an empty SQLite file is never migrated, and is not opened, since opening
    one writes SQLite's header into it.
    """
    if _is_empty_sqlite_file(url):
        return None
    engine = create_engine(url)
    try:
        async with connection_to(engine) as connection:
            return await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    except DBAPIError as error:
        if _sqlstate(error) == INSUFFICIENT_PRIVILEGE:
            raise _cannot_read(engine.url, error) from None
        raise
    finally:
        await engine.dispose()


def _is_empty_sqlite_file(url: str) -> bool:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return False
    file = Path(parsed.database)
    return file.is_file() and file.stat().st_size == 0


def _cannot_read(url: URL, error: DBAPIError) -> DatabasePrivilegeError:
    reason = (str(error.orig).strip().splitlines() or ["permission denied"])[0]
    user = url.username or "USER"
    return DatabasePrivilegeError(
        f"{describe_database(url)} refused to be read ({reason}): GRANT SELECT ON ALL TABLES"
        f" IN SCHEMA public TO {user}"
    )


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
    if connection.dialect.name == "postgresql":
        _check_privileges(connection)
    else:
        _check_writable(connection)


def _check_writable(connection: Connection) -> None:
    """Refuse a SQLite file the bot cannot write (an upgrade with nothing to do writes nothing).

    Started on one, the bot would store no update and answer nobody.
    """
    try:
        connection.execute(text("UPDATE alembic_version SET version_num = version_num"))
    except OperationalError as error:
        if "readonly" not in str(error.orig).lower():  # locked, say: not the file's permissions
            raise
        raise DatabasePrivilegeError(
            f"{describe_database(connection.engine.url)} cannot be written"
            f" ({error.orig}): check the permissions of the file and of its folder"
        ) from None


def _check_privileges(connection: Connection) -> None:
    """Refuse a user that cannot read and write every table (and use its id sequences)."""
    tables = sorted(Base.metadata.tables)
    rows = connection.execute(
        text(
            "SELECT c.relname, string_agg(p.privilege, ', ' ORDER BY p.position)"
            " FROM pg_class AS c, unnest(CAST(:privileges AS text[]))"
            " WITH ORDINALITY AS p(privilege, position)"
            " WHERE c.relkind IN ('r', 'p') AND c.relname = ANY(CAST(:tables AS text[]))"
            " AND c.relnamespace = CAST(current_schema() AS regnamespace)"
            # CASE: the privilege is asked of tables only, whatever order the plan takes
            " AND CASE WHEN c.relkind IN ('r', 'p')"
            " THEN NOT has_table_privilege(c.oid, p.privilege) END"
            " GROUP BY c.relname ORDER BY c.relname"
        ),
        {"tables": tables, "privileges": list(TABLE_PRIVILEGES)},
    ).all()
    sequences = (
        connection.execute(
            text(
                "SELECT s.relname FROM pg_class AS s"
                " JOIN pg_depend AS d ON d.objid = s.oid JOIN pg_class AS c ON c.oid = d.refobjid"
                " WHERE s.relkind = 'S' AND d.deptype IN ('a', 'i')"
                " AND c.relname = ANY(CAST(:tables AS text[]))"
                " AND c.relnamespace = CAST(current_schema() AS regnamespace)"
                " AND CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') END"
                " ORDER BY s.relname"
            ),
            {"tables": tables},
        )
        .scalars()
        .all()
    )
    lacking: dict[str, list[str]] = {}
    for table, privileges in rows:
        lacking.setdefault(privileges, []).append(table)
    what = [
        f"{privileges} on {'every table' if len(on) == len(tables) else ', '.join(on)}"
        for privileges, on in lacking.items()
    ]
    if sequences:
        what.append(f"USAGE on the sequences {', '.join(sequences)}")
    if what:
        url = connection.engine.url
        user = url.username or "USER"
        raise DatabasePrivilegeError(
            f"the user {user} cannot use telesnap's tables in {describe_database(url)}: it"
            f" lacks {'; '.join(what)}: {_owner_remedy(url)}, or GRANT SELECT, INSERT,"
            f" UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {user} and GRANT USAGE ON ALL"
            f" SEQUENCES IN SCHEMA public TO {user}"
        )


def check_revision(where: str, revision: str) -> None:
    """Refuse a database at ``revision`` that is not this telesnap's newest, saying what to do.

    For the commands that only read it (an upgrade first: their queries need the newest tables).
    """
    scripts = ScriptDirectory.from_config(alembic_config())
    head = scripts.get_current_head()
    if revision == head:
        return
    if revision not in {script.revision for script in scripts.walk_revisions()}:
        raise ConfigError(
            f"{where} is at revision {revision}, which this telesnap does not know:"
            " made by a newer version?"
        )
    raise ConfigError(
        f"{where} is at revision {revision}, older than this telesnap's {head}: run"
        " `telesnap db upgrade` (or start the bot, which upgrades it) first"
    )


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
