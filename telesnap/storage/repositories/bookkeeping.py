"""Timers (the processed updates are in the inbox: :mod:`.inbox`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import Timer, utc_now
from ..models.accounts import WHOLE_CHAT
from ._dialect import bulk_delete

__all__ = ["FAILURES_KEY", "SET_ASIDE_KEY", "TimerRepository"]

FAILURES_KEY = "failures"
"""In a timer's payload: how many times firing it has failed."""
SET_ASIDE_KEY = "set_aside"
"""In a timer's payload: why it was given up on (its last error)."""


class TimerRepository:
    """Timers: things to do at a given time, each fired at most once."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def add(
        self,
        kind: str,
        due_at: datetime,
        chat_id: int,
        thread_id: int = WHOLE_CHAT,
        game_id: int | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Timer:
        """Schedule a timer; it has its id on return."""
        timer = Timer(
            kind=kind,
            due_at=due_at,
            chat_id=chat_id,
            thread_id=thread_id,
            game_id=game_id,
            payload=dict(payload or {}),
        )
        self._session.add(timer)
        await self._session.flush()
        return timer

    async def due(self, now: datetime, limit: int = 100) -> list[Timer]:
        """Return unfired timers due at or before ``now``, earliest first.

        On PostgreSQL they are locked, skipping rows another worker holds, so no two take one.
        """
        statement = (
            select(Timer)
            .where(Timer.fired_at.is_(None), Timer.due_at <= now)
            .order_by(Timer.due_at, Timer.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        return list(await self._session.scalars(statement))

    async def next_due_at(self) -> datetime | None:
        """Return when the earliest unfired timer is due, or None if there is none."""
        statement = select(Timer.due_at).where(Timer.fired_at.is_(None)).order_by(Timer.due_at)
        return await self._session.scalar(statement.limit(1))

    async def mark_fired(self, timer_id: int, fired_at: datetime | None = None) -> bool:
        """Mark the timer fired; return False if it was fired already (or does not exist)."""
        statement = (
            update(Timer)
            .where(Timer.id == timer_id, Timer.fired_at.is_(None))
            .values(fired_at=fired_at or utc_now())
            .returning(Timer.id)
            .execution_options(synchronize_session="fetch")
        )
        return await self._session.scalar(statement) is not None

    async def postpone(self, timer_id: int, due_at: datetime, failures: int) -> None:
        """Try an unfired timer again at ``due_at``, counting ``failures`` in its payload."""
        timer = await self._session.get(Timer, timer_id)
        if timer is None or timer.fired_at is not None:
            return
        timer.due_at = due_at
        timer.payload = {**timer.payload, FAILURES_KEY: failures}
        await self._session.flush()

    async def set_aside(self, timer_id: int, at: datetime, failures: int, error: str) -> bool:
        """Give up on a failing timer: mark it fired, noting why; False if fired or missing."""
        timer = await self._session.get(Timer, timer_id)
        if timer is None or timer.fired_at is not None:
            return False
        timer.fired_at = at
        timer.payload = {**timer.payload, FAILURES_KEY: failures, SET_ASIDE_KEY: error[:500]}
        await self._session.flush()
        return True

    async def forget_fired_before(self, moment: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` timers fired before ``moment`` (unfired ones stay); how many."""
        oldest = (
            select(Timer.id)
            .where(Timer.due_at < moment, Timer.fired_at < moment)
            .order_by(Timer.due_at)
            .limit(limit)
        )
        return await bulk_delete(self._session, delete(Timer).where(Timer.id.in_(oldest)))

    async def pending_for_game(self, game_id: int, kind: str) -> Timer | None:
        """The game's earliest unfired timer of ``kind`` (None: it has none)."""
        statement = (
            select(Timer)
            .where(Timer.game_id == game_id, Timer.kind == kind, Timer.fired_at.is_(None))
            .order_by(Timer.due_at, Timer.id)
            .limit(1)
        )
        timer: Timer | None = await self._session.scalar(statement)
        return timer

    async def cancel_for_game(self, game_id: int, kind: str | None = None) -> int:
        """Delete the game's unfired timers (of ``kind`` if given); return how many went."""
        statement = delete(Timer).where(Timer.game_id == game_id, Timer.fired_at.is_(None))
        if kind is not None:
            statement = statement.where(Timer.kind == kind)
        result = await self._session.scalars(
            statement.returning(Timer.id).execution_options(synchronize_session="fetch")
        )
        return len(result.all())
