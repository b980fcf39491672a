"""The SQLite connection under the engine: results, errors, its thread and its cost."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.storage.database import create_engine
from telesnap.storage.sqlite_driver import SQLiteConnection, connect


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'driver.db'}")
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE card (id INTEGER PRIMARY KEY, rank TEXT)"))
    yield engine
    await engine.dispose()


async def driver_connection(engine: AsyncEngine) -> SQLiteConnection:
    async with engine.connect() as connection:
        raw = await connection.get_raw_connection()
        driver = raw.driver_connection
        assert isinstance(driver, SQLiteConnection)
        return driver


async def test_rows_counts_and_ids_come_back_as_sqlite_gives_them(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        inserted = await connection.execute(
            text("INSERT INTO card (rank) VALUES (:rank)"), [{"rank": r} for r in "A23456"]
        )
        assert inserted.rowcount == 6
        one = await connection.execute(text("INSERT INTO card (rank) VALUES ('K')"))
        assert one.lastrowid == 7
        changed = await connection.execute(text("UPDATE card SET rank = 'Q' WHERE id > 4"))
        assert changed.rowcount == 3
        result = await connection.execute(text("SELECT id, rank FROM card ORDER BY id"))
        assert result.keys() == ["id", "rank"]
        assert result.fetchone() == (1, "A")
        assert result.fetchmany(2) == [(2, "2"), (3, "3")]
        assert result.fetchall() == [(4, "4"), (5, "Q"), (6, "Q"), (7, "Q")]
        assert result.fetchone() is None
        empty = await connection.execute(text("SELECT id FROM card WHERE rank = 'J'"))
        assert empty.all() == []


async def test_errors_are_sqlalchemy_errors_and_the_connection_goes_on(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await connection.execute(text("INSERT INTO card (id, rank) VALUES (1, 'A')"))
    async with engine.connect() as connection:
        await connection.execute(text("INSERT INTO card (id, rank) VALUES (2, '2')"))
        with pytest.raises(IntegrityError):
            await connection.execute(text("INSERT INTO card (id, rank) VALUES (1, 'K')"))
        await connection.rollback()
        with pytest.raises(OperationalError, match="no such table"):
            await connection.execute(text("SELECT * FROM joker"))
    async with engine.connect() as connection:
        rows = (await connection.execute(text("SELECT id, rank FROM card"))).all()
    assert rows == [(1, "A")], "the rolled back transaction left nothing behind"


async def test_a_transaction_costs_one_hand_off_per_statement_and_one_to_commit(
    engine: AsyncEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))  # the connection is open and set up
    hand_offs: list[Any] = []
    run_in_thread = SQLiteConnection._in_thread

    async def counted(self: SQLiteConnection, function: Any) -> Any:
        hand_offs.append(function)
        return await run_in_thread(self, function)

    monkeypatch.setattr(SQLiteConnection, "_in_thread", counted)
    async with engine.begin() as connection:
        await connection.execute(text("INSERT INTO card (rank) VALUES ('A')"))
        assert len(hand_offs) == 1, "BEGIN IMMEDIATE goes with the first statement"
        other = sqlite3.connect(tmp_path / "driver.db", timeout=0)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("INSERT INTO card (rank) VALUES ('K')")
        other.close()
        rows = (await connection.execute(text("SELECT id, rank FROM card"))).all()
        assert rows == [(1, "A")]
        assert len(hand_offs) == 2, "execute, fetch and close in one hand-off"
    assert len(hand_offs) == 3, "then the commit; the pool's rollback costs nothing"
    async with engine.begin():
        pass
    assert len(hand_offs) == 3, "a transaction with no statement costs nothing"


async def test_sqlite_is_used_from_the_connection_thread_only(engine: AsyncEngine) -> None:
    driver = await driver_connection(engine)
    with pytest.raises(sqlite3.ProgrammingError, match="thread"):
        driver._conn.execute("SELECT 1")


async def test_disposing_of_the_engine_closes_the_connection_and_its_thread(
    engine: AsyncEngine,
) -> None:
    driver = await driver_connection(engine)
    thread = await driver.run(lambda _sqlite: threading.current_thread())
    assert thread.name.startswith("telesnap-sqlite")
    await engine.dispose()
    thread.join(timeout=10)
    assert not thread.is_alive()
    with pytest.raises(ValueError, match="no active connection"):
        driver.cursor()
    await driver.close()  # closing again changes nothing


async def test_a_database_that_cannot_be_opened_says_so(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.OperationalError, match="unable to open"):
        await connect(str(tmp_path / "missing" / "dir" / "game.db"))


async def test_a_cancelled_caller_leaves_the_connection_working(tmp_path: Path) -> None:
    loop_errors: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: loop_errors.append(ctx))
    driver = await connect(str(tmp_path / "cancel.db"))
    release = threading.Event()
    started = threading.Event()

    def held(sqlite: sqlite3.Connection) -> int:
        started.set()
        release.wait()
        return int(sqlite.execute("SELECT 1").fetchone()[0])

    task = asyncio.create_task(driver.run(held))
    await asyncio.to_thread(started.wait)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    assert await driver.run(lambda sqlite: sqlite.execute("SELECT 2").fetchone()[0]) == 2
    await driver.close()
    assert loop_errors == [], "the late result of the cancelled call was dropped quietly"


async def test_an_open_called_off_leaves_no_connection_behind(tmp_path: Path) -> None:
    # A pool that is disposed of while a caller waits to connect cancels that caller.
    # The connection its thread opens after that must be closed before the caller ends:
    # left open, it holds the file (and recreates one removed meanwhile).
    release = threading.Event()
    started = threading.Event()
    opened: list[sqlite3.Connection] = []

    def slow_connect() -> sqlite3.Connection:
        started.set()
        release.wait()
        opened.append(sqlite3.connect(tmp_path / "late.db", check_same_thread=False))
        return opened[-1]

    task = asyncio.create_task(SQLiteConnection(slow_connect).open())
    await asyncio.to_thread(started.wait)
    task.cancel()
    release.set()
    await asyncio.wait([task])
    assert task.cancelled()
    assert len(opened) == 1, "the caller ended only once the thread had opened it"
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("SELECT 1")
