"""Concurrent units of work on one game serialise: no seq collision, no lost update.

SQLite serialises with ``BEGIN IMMEDIATE``; PostgreSQL with ``SELECT ... FOR UPDATE``.
Each worker reads the game's last seq, yields to the event loop so that the
others can run, then appends: without the lock, two workers would read the
same last seq and collide on the primary key.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import TurnSkipped
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.migrate import upgrade_database
from telesnap.storage.repositories import OperationRecord
from telesnap.storage.uow import UnitOfWork

Factory = async_sessionmaker[AsyncSession]
CHAT = -100
WORKERS = 8
OPERATIONS_EACH = 3


async def new_game(factory: Factory) -> int:
    async with UnitOfWork(factory) as uow:
        await uow.chats.upsert(CHAT, "group", "Race")
        await uow.users.upsert(1, "Ada")
        game = await uow.games.add(CHAT, 0, creator_id=1)
        return game.id


async def append_after_reading(factory: Factory, game_id: int, worker: int) -> tuple[int, int]:
    """Lock the game, read its last seq, let others run, append; return (read, first new)."""
    async with UnitOfWork(factory) as uow:
        assert await uow.games.get(game_id) is not None  # locks the game's row
        last_seen = await uow.history.last_seq(game_id)
        for _ in range(5):
            await asyncio.sleep(0)
        # Each worker's operations name it and their order: seat = worker * 3 + n.
        records = [OperationRecord(TurnSkipped(worker * OPERATIONS_EACH + n)) for n in range(3)]
        rows = await uow.history.append(game_id, records)
        return last_seen, rows[0]


async def test_concurrent_appends_never_collide(session_factory: Factory) -> None:
    game_id = await new_game(session_factory)
    results = await asyncio.gather(
        *(append_after_reading(session_factory, game_id, worker) for worker in range(WORKERS))
    )
    for last_seen, first_new in results:
        assert first_new == last_seen + 1, "another unit of work appended in between"
    async with UnitOfWork(session_factory) as uow:
        operations = await uow.history.load(game_id)
    assert [op.seq for op in operations] == list(range(1, WORKERS * OPERATIONS_EACH + 1))
    blocks = [operations[i : i + OPERATIONS_EACH] for i in range(0, len(operations), 3)]
    seats = [[op.payload["seat"] for op in block] for block in blocks]
    for block_seats in seats:
        assert len({seat // OPERATIONS_EACH for seat in block_seats}) == 1
        assert [seat % OPERATIONS_EACH for seat in block_seats] == [0, 1, 2]
    assert sorted(block[0] // OPERATIONS_EACH for block in seats) == list(range(WORKERS))


async def test_a_second_unit_of_work_waits_for_the_first_to_commit(
    session_factory: Factory,
) -> None:
    game_id = await new_game(session_factory)
    first_holds_the_lock = asyncio.Event()
    order: list[str] = []

    async def first() -> None:
        async with UnitOfWork(session_factory) as uow:
            game = await uow.games.get(game_id)
            assert game is not None
            first_holds_the_lock.set()
            await uow.history.append(game_id, [OperationRecord(TurnSkipped(0))])
            order.append("first appended")
        order.append("first committed")

    async def second() -> int:
        await first_holds_the_lock.wait()
        async with UnitOfWork(session_factory) as uow:
            game = await uow.games.get(game_id)
            assert game is not None
            order.append("second locked")
            rows = await uow.history.append(game_id, [OperationRecord(TurnSkipped(1))])
            return rows[0]

    _, second_seq = await asyncio.gather(first(), second())
    assert second_seq == 2
    assert order.index("second locked") > order.index("first appended")


async def test_sqlite_units_of_work_take_the_write_lock_at_their_first_statement(
    tmp_path: Path,
) -> None:
    path = tmp_path / "locks.db"
    await upgrade_database(f"sqlite:///{path}")
    engine = create_engine(f"sqlite:///{path}")
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            assert await uow.users.get(1) is None  # a read: BEGIN IMMEDIATE has run
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()
        await engine.dispose()
