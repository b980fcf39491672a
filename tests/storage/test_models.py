"""Column types: aware UTC datetimes on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.storage.models import Game, UtcDateTime
from telesnap.storage.uow import UnitOfWork


async def test_datetimes_round_trip_as_aware_utc_with_microseconds(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    plus_five = timezone(timedelta(hours=5))
    shown_at = datetime(2025, 3, 1, 17, 30, 15, 123456, tzinfo=plus_five)
    async with UnitOfWork(session_factory) as uow:
        await uow.users.upsert(1, "Ada")
        await uow.chats.upsert(-100, "supergroup", "Snap club")
        game = await uow.games.add(-100, 0, creator_id=1)
        game.started_at = shown_at
        game_id = game.id

    async with session_factory() as session:
        stored = await session.scalar(select(Game.started_at).where(Game.id == game_id))
        created = await session.scalar(select(Game.created_at).where(Game.id == game_id))
    assert stored == shown_at
    assert stored is not None
    assert stored.tzinfo is UTC
    assert stored.hour == 12
    assert stored.microsecond == 123456
    assert created is not None
    assert created.tzinfo is UTC


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        UtcDateTime().process_bind_param(datetime(2025, 1, 1), sqlite.dialect())


def test_values_read_without_a_zone_are_utc() -> None:
    read = UtcDateTime().process_result_value(datetime(2025, 1, 1, 8), sqlite.dialect())
    assert read == datetime(2025, 1, 1, 8, tzinfo=UTC)
