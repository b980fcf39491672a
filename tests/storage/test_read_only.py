"""Read-only units of work: they never take SQLite's write lock, and refuse to write."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.storage.errors import ReadOnlyError
from telesnap.storage.models import User
from telesnap.storage.uow import UnitOfWork

Factory = async_sessionmaker[AsyncSession]


def sqlite_path(engine: AsyncEngine) -> str:
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write lock")
    path = engine.url.database
    assert path
    return path


@contextmanager
def other_connection(path: str) -> Iterator[sqlite3.Connection]:
    """Another process's view of the file: a plain sqlite3 connection that never waits."""
    connection = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


async def add_user(factory: Factory, user_id: int, name: str) -> None:
    async with UnitOfWork(factory) as uow:
        await uow.users.upsert(user_id, name)


async def rename_in_a_read(factory: Factory, user_id: int, name: str) -> None:
    async with UnitOfWork(factory, read_only=True) as uow:
        user = await uow.users.get(user_id)
        assert user is not None
        user.first_name = name


async def test_a_read_completes_while_another_connection_holds_the_write_lock(
    engine: AsyncEngine, session_factory: Factory
) -> None:
    path = sqlite_path(engine)
    await add_user(session_factory, 1, "Ada")
    with other_connection(path) as writer:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE users SET first_name = 'Uncommitted' WHERE id = 1")
        # A write transaction would wait for the lock here, then fail "database is locked".
        async with UnitOfWork(session_factory, read_only=True) as uow:
            user = await uow.users.get(1)
        writer.execute("ROLLBACK")
    assert user is not None
    assert user.first_name == "Ada"


async def test_a_read_leaves_the_write_lock_free_and_a_write_takes_it(
    engine: AsyncEngine, session_factory: Factory
) -> None:
    path = sqlite_path(engine)
    await add_user(session_factory, 1, "Ada")
    with other_connection(path) as other:
        async with UnitOfWork(session_factory, read_only=True) as uow:
            assert await uow.users.get(1) is not None
            other.execute("BEGIN IMMEDIATE")  # free at once, while the read is open
            other.execute("ROLLBACK")
        async with UnitOfWork(session_factory) as uow:
            assert await uow.users.get(1) is not None
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")


async def test_a_read_only_unit_of_work_refuses_to_write_and_changes_nothing(
    session_factory: Factory,
) -> None:
    await add_user(session_factory, 1, "Ada")
    with pytest.raises(ReadOnlyError):
        async with UnitOfWork(session_factory, read_only=True) as uow:
            await uow.users.upsert(2, "Bob")  # a Core INSERT ... ON CONFLICT
    with pytest.raises(ReadOnlyError):
        await rename_in_a_read(session_factory, 1, "Changed")
    async with UnitOfWork(session_factory, read_only=True) as uow:
        names = list(await uow.session.scalars(select(User.first_name).order_by(User.id)))
    assert names == ["Ada"]


async def test_on_postgresql_the_transaction_is_read_only_and_the_connection_is_reset(
    engine: AsyncEngine, session_factory: Factory
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's READ ONLY transactions")
    show = text("SHOW transaction_read_only")
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await uow.session.scalar(show) == "on"
    for _ in range(3):  # every pooled connection is back to read-write
        async with UnitOfWork(session_factory) as uow:
            assert await uow.session.scalar(show) == "off"
    await add_user(session_factory, 3, "Cid")
