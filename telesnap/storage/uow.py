"""The unit of work: one session, one transaction, every repository.

>>> async def rename(factory: async_sessionmaker[AsyncSession]) -> None:
...     async with UnitOfWork(factory) as uow:
...         await uow.users.upsert(42, "Ada")
...     # committed here; an exception inside the block would have rolled back
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from .repositories import (
    BoardViewRepository,
    ChatRepository,
    ChatSettingsRepository,
    GameRepository,
    HistoryRepository,
    ProcessedUpdateRepository,
    StatsRepository,
    TimerRepository,
    UserRepository,
)

__all__ = ["UnitOfWork"]


class UnitOfWork:
    """``async with UnitOfWork(factory) as uow:`` commits on a clean exit, else rolls back.

    On SQLite the transaction starts with ``BEGIN IMMEDIATE`` at the first
    statement, so units of work that touch the database run one at a time; on
    PostgreSQL the repositories' locked reads (``FOR UPDATE``) serialise the
    ones that change the same game.
    """

    users: UserRepository
    chats: ChatRepository
    settings: ChatSettingsRepository
    games: GameRepository
    history: HistoryRepository
    board_views: BoardViewRepository
    updates: ProcessedUpdateRepository
    timers: TimerRepository
    stats: StatsRepository

    def __init__(self, factory: async_sessionmaker[AsyncSession]) -> None:
        self._factory = factory
        self._session: AsyncSession | None = None

    @property
    def session(self) -> AsyncSession:
        """The session of this unit of work (only inside ``async with``)."""
        if self._session is None:
            raise RuntimeError("the unit of work is not open: use it with 'async with'")
        return self._session

    async def __aenter__(self) -> Self:
        session = self._factory()
        self._session = session
        self.users = UserRepository(session)
        self.chats = ChatRepository(session)
        self.settings = ChatSettingsRepository(session)
        self.games = GameRepository(session)
        self.history = HistoryRepository(session)
        self.board_views = BoardViewRepository(session)
        self.updates = ProcessedUpdateRepository(session)
        self.timers = TimerRepository(session)
        self.stats = StatsRepository(session)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        session = self.session
        try:
            if exc_type is None:
                await session.commit()
            else:
                await session.rollback()
        finally:
            self._session = None
            await session.close()

    async def flush(self) -> None:
        """Send pending changes to the database without committing (to get ids, or fail early)."""
        await self.session.flush()
