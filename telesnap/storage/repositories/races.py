"""Snap races: open one with its first correct call, find it, and close it exactly once."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import Game, Race, RaceState, utc_now

__all__ = ["RaceRepository"]


class RaceRepository:
    """The races of games; at most one open race per game."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def open(
        self,
        game_id: int,
        chat_id: int,
        thread_id: int,
        *,
        opened_seq: int,
        deadline_ns: int,
        deadline_at: datetime,
    ) -> Race:
        """Open a race for the game (call it under the game's row lock); it has its id on return."""
        race = Race(
            game_id=game_id,
            chat_id=chat_id,
            thread_id=thread_id,
            state=RaceState.OPEN.value,
            opened_seq=opened_seq,
            deadline_ns=deadline_ns,
            deadline_at=deadline_at,
        )
        self._session.add(race)
        await self._session.flush()
        return race

    async def find_open(self, game_id: int) -> Race | None:
        """The game's open race, if any."""
        statement = select(Race).where(Race.game_id == game_id, Race.state == RaceState.OPEN.value)
        return await self._session.scalar(statement.execution_options(populate_existing=True))

    async def lock_game_of(self, race_id: int) -> Game | None:
        """The race's game, locked for this transaction (as every change locks it), or None.

        One statement, so deciding a race waits on the database once before its game is held.
        """
        game_id = select(Race.game_id).where(Race.id == race_id).scalar_subquery()
        statement = (
            select(Game)
            .where(Game.id == game_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return await self._session.scalar(statement)

    async def get(self, race_id: int) -> Race | None:
        """The race by id, read afresh (another worker may have closed it)."""
        statement = select(Race).where(Race.id == race_id)
        return await self._session.scalar(statement.execution_options(populate_existing=True))

    async def list_open(self) -> list[Race]:
        """Every open race, the earliest deadline first."""
        statement = (
            select(Race)
            .where(Race.state == RaceState.OPEN.value)
            .order_by(Race.deadline_at, Race.id)
        )
        return list(await self._session.scalars(statement))

    async def list_overdue(self, deadline_before_ns: int) -> list[Race]:
        """Open races past ``deadline_before_ns``, earliest first (read only, partial index)."""
        statement = (
            select(Race)
            .where(Race.state == RaceState.OPEN.value, Race.deadline_ns < deadline_before_ns)
            .order_by(Race.deadline_ns, Race.id)
        )
        return list(await self._session.scalars(statement))

    async def close(self, race_id: int, state: RaceState, decided_seq: int | None = None) -> bool:
        """Close an open race as ``state``; False if it was closed already (by anyone).

        Conditional on the race being open, so it closes once even if two workers get here.
        """
        statement = (
            update(Race)
            .where(Race.id == race_id, Race.state == RaceState.OPEN.value)
            .values(state=state.value, decided_seq=decided_seq, closed_at=utc_now())
            .returning(Race.id)
            .execution_options(synchronize_session="fetch")
        )
        return await self._session.scalar(statement) is not None
