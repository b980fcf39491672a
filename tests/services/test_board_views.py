"""Storing the boards shown: with a change of their game, or batched; a bad board fails alone."""

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


async def test_a_call_stores_its_games_waiting_boards_in_its_own_transaction(
    session_factory: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    game_id = await a_game(session_factory)
    shown = ShownBoards(UnitsOfWork(session_factory), grace_s=3600)
    recorded = asyncio.create_task(shown.record(board(game_id, 1)))
    await asyncio.sleep(0)  # the board is shown and waits
    commits: list[object] = []

    def count(connection: object) -> None:
        commits.append(connection)

    event.listen(engine.sync_engine, "commit", count)
    try:
        async with shown.carry() as boards, UnitOfWork(session_factory) as uow:
            await boards.store_waiting(uow, game_id)
            assert boards.shown_here_at(game_id, 1) == SHOWN + timedelta(seconds=1)
        await recorded  # answered by the change, long before the grace is over
    finally:
        event.remove(engine.sync_engine, "commit", count)
    assert len(commits) == 1, "no transaction of its own"
    assert await stored(session_factory) == [(1, 101)]
    async with UnitOfWork(session_factory) as uow:
        assert await shown.shown_at(uow, game_id, 1) == SHOWN + timedelta(seconds=1)


async def test_the_boards_of_a_change_that_fails_are_stored_alone(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    shown = ShownBoards(UnitsOfWork(session_factory), grace_s=0.05)
    recorded = asyncio.create_task(shown.record(board(game_id, 1)))
    await asyncio.sleep(0)

    async def failing_change() -> None:
        async with shown.carry() as boards, UnitOfWork(session_factory) as uow:
            await boards.store_waiting(uow, game_id)
            raise RuntimeError("the change fails")

    with pytest.raises(RuntimeError):
        await failing_change()
    await recorded
    assert await stored(session_factory) == [(1, 101)]


async def test_a_board_waiting_when_the_bot_stops_is_stored(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    shown = ShownBoards(UnitsOfWork(session_factory), grace_s=3600)
    recorded = asyncio.create_task(shown.record(board(game_id, 1)))
    await asyncio.sleep(0)
    recorded.cancel()
    with pytest.raises(asyncio.CancelledError):
        await recorded
    assert await stored(session_factory) == [(1, 101)]


async def test_a_version_shown_again_keeps_its_first_moment(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    first = ShownBoards(UnitsOfWork(session_factory), grace_s=0)
    await first.record(board(game_id, 1))
    restarted = ShownBoards(UnitsOfWork(session_factory), grace_s=0)
    again = ShownBoard(game_id, 1, 555, SHOWN + timedelta(hours=1))
    await restarted.record(again)
    async with UnitOfWork(session_factory) as uow:
        assert await restarted.shown_at(uow, game_id, 1) == SHOWN + timedelta(seconds=1)
    assert await stored(session_factory) == [(1, 101)]


class HeldBoardViews:
    """A board repository whose first write waits for ``release`` (a batch under way)."""

    def __init__(self) -> None:
        self.writes: list[list[ShownBoard]] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def record(self, views: list[ShownBoard]) -> set[tuple[int, int]]:
        self.writes.append(list(views))
        if len(self.writes) == 1:
            self.started.set()
            await self.release.wait()
        return {(view.game_id, view.version) for view in views}


class HeldUnit:
    """Just enough of a unit of work for :class:`ShownBoards`."""

    def __init__(self, board_views: HeldBoardViews) -> None:
        self.board_views = board_views

    async def __aenter__(self) -> HeldUnit:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None


async def test_a_call_leaves_alone_the_boards_a_batch_is_storing() -> None:
    # With PostgreSQL, both inserting one row would wait for each other: a deadlock.
    views = HeldBoardViews()
    shown = ShownBoards(lambda **_: HeldUnit(views), grace_s=0)  # type: ignore[arg-type,return-value]
    recorded = asyncio.create_task(shown.record(board(1, 1)))
    await views.started.wait()
    async with shown.carry() as boards:
        await boards.store_waiting(HeldUnit(views), 1)  # type: ignore[arg-type]
        assert boards.shown_here_at(1, 1) is None
    views.release.set()
    await recorded
    assert views.writes == [[board(1, 1)]], "written once, by the batch"
