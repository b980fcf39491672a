"""Storing the boards shown: batched when they come together, one bad board fails alone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.services.board_views import ShownBoards
from telesnap.storage.models import BoardView
from telesnap.storage.repositories import ShownBoard
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

SHOWN = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


async def a_game(sessions: async_sessionmaker[AsyncSession]) -> int:
    async with UnitOfWork(sessions) as uow:
        await uow.users.upsert(1, "Ann")
        await uow.chats.upsert(-600, "group")
        return (await uow.games.add(-600, 0, creator_id=1)).id


def board(game_id: int, version: int) -> ShownBoard:
    return ShownBoard(game_id, version, 100 + version, SHOWN + timedelta(seconds=version))


async def stored(sessions: async_sessionmaker[AsyncSession]) -> list[tuple[int, int]]:
    async with sessions() as session:
        rows = await session.execute(
            select(BoardView.version, BoardView.message_id).order_by(BoardView.version)
        )
        return [(row.version, row.message_id) for row in rows]


async def test_boards_shown_together_are_stored_in_one_or_two_transactions(
    session_factory: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    game_id = await a_game(session_factory)
    shown = ShownBoards(UnitsOfWork(session_factory))
    commits: list[object] = []

    def count(connection: object) -> None:
        commits.append(connection)

    event.listen(engine.sync_engine, "commit", count)
    try:
        await asyncio.gather(*(shown.record(board(game_id, v)) for v in range(1, 21)))
    finally:
        event.remove(engine.sync_engine, "commit", count)
    assert await stored(session_factory) == [(v, 100 + v) for v in range(1, 21)]
    assert 1 <= len(commits) <= 2
    async with UnitOfWork(session_factory) as uow:
        assert await shown.newest_version(uow, game_id) == 20
        assert await shown.shown_at(uow, game_id, 7) == SHOWN + timedelta(seconds=7)


async def test_a_board_that_cannot_be_stored_fails_alone(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    shown = ShownBoards(UnitsOfWork(session_factory))
    results = await asyncio.gather(
        shown.record(board(game_id, 1)),
        shown.record(board(game_id, 2)),
        shown.record(board(game_id + 99, 3)),  # no such game
        shown.record(board(game_id, 4)),
        return_exceptions=True,
    )
    assert [isinstance(result, Exception) for result in results] == [False, False, True, False]
    assert await stored(session_factory) == [(1, 101), (2, 102), (4, 104)]
    await shown.record(board(game_id, 5))
    assert (5, 105) in await stored(session_factory)
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        await shown.record(board(game_id + 99, 6))
