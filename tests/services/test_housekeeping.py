"""Old processed-update marks and fired timers are forgotten; nothing still needed is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.services import housekeeping
from telesnap.services.housekeeping import HousekeepingService, Tidied
from telesnap.storage.models import InboxUpdate, Timer
from telesnap.storage.repositories.privacy import PURGE_KEY
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

Factory = async_sessionmaker[AsyncSession]
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CHAT = -300


async def mark_processed(factory: Factory, update_id: int, at: datetime) -> None:
    async with UnitOfWork(factory) as uow:
        uow.session.add(InboxUpdate(update_id=update_id, received_at=at, processed_at=at))


async def add_timer(factory: Factory, due_at: datetime, fired_at: datetime | None) -> int:
    async with UnitOfWork(factory) as uow:
        await uow.chats.upsert(CHAT, "group", "Tidy club")
        timer = await uow.timers.add("lobby", due_at, CHAT)
        if fired_at is not None:
            assert await uow.timers.mark_fired(timer.id, fired_at)
        return timer.id


async def remaining(factory: Factory) -> tuple[list[int], list[int]]:
    async with UnitOfWork(factory) as uow:
        updates = await uow.session.scalars(
            select(InboxUpdate.update_id).order_by(InboxUpdate.update_id)
        )
        timers = await uow.session.scalars(select(Timer.id).order_by(Timer.id))
        return list(updates), list(timers)


async def test_tidying_forgets_only_what_can_no_longer_matter(
    session_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(housekeeping, "BATCH", 2)  # several batches for a few rows
    for update_id in range(1, 6):
        await mark_processed(session_factory, update_id, NOW - timedelta(days=3))
    await mark_processed(session_factory, 6, NOW - timedelta(hours=30))
    await mark_processed(session_factory, 7, NOW - timedelta(minutes=1))
    old_fired = [
        await add_timer(session_factory, NOW - timedelta(days=5), NOW - timedelta(days=4))
        for _ in range(3)
    ]
    day = timedelta(days=1)
    recently_fired = await add_timer(session_factory, NOW - 3 * day, NOW - day)
    old_pending = await add_timer(session_factory, NOW - timedelta(days=9), None)
    future = await add_timer(session_factory, NOW + timedelta(hours=1), None)

    tidied = await HousekeepingService(UnitsOfWork(session_factory)).tidy(NOW)

    assert tidied == Tidied(processed_updates=5, fired_timers=3)
    updates, timers = await remaining(session_factory)
    assert updates == [6, 7], "marks of the last two days stay"
    assert timers == [recently_fired, old_pending, future]
    assert not set(old_fired) & set(timers)
    async with UnitOfWork(session_factory) as uow:
        assert not await uow.updates.mark_update_processed(7), "a recent update is still a repeat"


async def test_tidying_runs_at_start_then_every_five_minutes(session_factory: Factory) -> None:
    service = HousekeepingService(UnitsOfWork(session_factory))
    await mark_processed(session_factory, 1, NOW - timedelta(days=3))
    assert await service.tidy_if_due(NOW) == Tidied(processed_updates=1, fired_timers=0)
    await mark_processed(session_factory, 2, NOW - timedelta(days=3))
    assert await service.tidy_if_due(NOW + timedelta(minutes=4)) is None
    assert (await remaining(session_factory))[0] == [2], "not yet: tidied four minutes ago"
    assert await service.tidy_if_due(NOW + timedelta(minutes=5)) == Tidied(1, 0)
    async with UnitOfWork(session_factory) as uow:
        count = await uow.session.scalar(select(func.count()).select_from(InboxUpdate))
    assert count == 0


async def stored_payloads(factory: Factory) -> dict[int, object]:
    async with UnitOfWork(factory) as uow:
        rows = await uow.session.execute(select(InboxUpdate.update_id, InboxUpdate.payload))
        return {int(row[0]): row[1] for row in rows}


async def test_a_processed_updates_content_goes_after_ten_minutes_its_mark_stays(
    session_factory: Factory,
) -> None:
    async with UnitOfWork(session_factory) as uow:
        for update_id, minutes in ((1, 11), (2, 9)):
            at = NOW - timedelta(minutes=minutes)
            payload = {"update_id": update_id, "message": {"from": {"first_name": "Ann"}}}
            uow.session.add(
                InboxUpdate(update_id=update_id, payload=payload, received_at=at, processed_at=at)
            )
        uow.session.add(InboxUpdate(update_id=3, payload={"update_id": 3}, received_at=NOW))

    tidied = await HousekeepingService(UnitsOfWork(session_factory)).tidy(NOW)

    assert tidied.dropped_payloads == 1
    payloads = await stored_payloads(session_factory)
    assert payloads[1] is None, "processed more than ten minutes ago: its content is gone"
    assert payloads[2] is not None, "still within the grace"
    assert payloads[3] is not None, "pending: still needed"
    async with UnitOfWork(session_factory) as uow:
        assert not await uow.updates.mark_update_processed(1), "its mark still stops a repeat"


async def test_one_worker_purges_at_a_time(
    engine: AsyncEngine, session_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one process: nobody to share the purge with")
    monkeypatch.setattr(housekeeping, "BATCH", 2)
    for update_id in range(1, 6):
        await mark_processed(session_factory, update_id, NOW - timedelta(days=3))
    old_fired = await add_timer(session_factory, NOW - timedelta(days=5), NOW - timedelta(days=4))
    service = HousekeepingService(UnitsOfWork(session_factory))
    async with engine.connect() as other_worker:  # another worker, in the middle of a purge
        await other_worker.execute(text("SELECT pg_advisory_lock(:key)"), {"key": PURGE_KEY})
        assert await service.tidy(NOW) == Tidied(processed_updates=0, fired_timers=0)
        assert await remaining(session_factory) == ([1, 2, 3, 4, 5], [old_fired])
        await other_worker.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": PURGE_KEY})
    tidied = await service.tidy(NOW)
    assert (tidied.processed_updates, tidied.fired_timers) == (5, 1)
    assert await remaining(session_factory) == ([], [])
