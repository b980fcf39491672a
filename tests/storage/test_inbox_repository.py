"""The inbox table: an update stored once, pending until processed, processed once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.storage.models import utc_now
from telesnap.storage.repositories import INBOX_CHANNEL, StoredElsewhere, StoredUpdate
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..inbox_marks import is_processed

Factory = async_sessionmaker[AsyncSession]


def received(update_id: int, *, chat_id: int = -5, is_call: bool = False) -> StoredUpdate:
    return StoredUpdate(update_id, chat_id, 0, is_call, {"update_id": update_id}, 10**18, "h1")


async def test_a_redelivered_update_is_stored_once(session_factory: Factory) -> None:
    async with UnitOfWork(session_factory) as uow:
        assert await uow.updates.store([received(1), received(2)]) == [1, 2]
    async with UnitOfWork(session_factory) as uow:
        assert await uow.updates.store([received(2), received(3)]) == [3]
        assert [u.update_id for u in await uow.updates.next_in_topic(-5, 0)] == [1, 2, 3]


async def test_an_update_is_pending_until_its_change_marks_it_and_then_a_duplicate(
    session_factory: Factory,
) -> None:
    async with UnitOfWork(session_factory) as uow:
        await uow.updates.store([received(1), received(2, is_call=True)])
    async with UnitOfWork(session_factory) as uow:
        assert [u.update_id for u in await uow.updates.pending_calls()] == [2]
        assert await uow.updates.pending_topics() == [(-5, 0)]
        assert await uow.updates.mark_update_processed(1), "its change marks it"
    async with UnitOfWork(session_factory) as uow:
        assert not await uow.updates.mark_update_processed(1), "applied again: a duplicate"
        assert await uow.updates.next_in_topic(-5, 0) == []
        assert await uow.updates.pending(2) is not None
        await uow.updates.mark_handled(2)
    async with UnitOfWork(session_factory) as uow:
        assert await uow.updates.pending(2) is None
        assert await is_processed(uow.session, 2)
        assert await uow.updates.mark_update_processed(99), "one the inbox never held"
        assert not await uow.updates.mark_update_processed(99)


async def test_only_processed_updates_are_forgotten(session_factory: Factory) -> None:
    async with UnitOfWork(session_factory) as uow:
        await uow.updates.store([received(1), received(2)])
        await uow.updates.mark_handled(1)
    async with UnitOfWork(session_factory) as uow:
        assert await uow.updates.forget_before(utc_now() + timedelta(days=1)) == 1
    async with UnitOfWork(session_factory) as uow:
        assert [u.update_id for u in await uow.updates.next_in_topic(-5, 0)] == [2]


async def test_an_update_its_committed_change_marked_is_not_marked_again(
    engine: AsyncEngine, session_factory: Factory
) -> None:
    units = UnitsOfWork(session_factory)
    async with units() as uow:
        await uow.updates.store([received(1), received(2)])
    async with units() as uow:
        assert await uow.updates.mark_update_processed(1), "its change marks it, and commits"

    async def failing_change() -> None:
        async with units() as uow:
            assert await uow.updates.mark_update_processed(2)
            raise RuntimeError("the change of update 2 fails")

    with pytest.raises(RuntimeError):
        await failing_change()
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        async with units() as uow:
            await uow.updates.mark_handled(1)
        assert statements == [], "processed for good already: no statement"
        async with units() as uow:
            await uow.updates.mark_handled(2)
        assert any("UPDATE inbox" in sql for sql in statements), (
            "the rolled back mark did not count"
        )
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", count)
    async with units() as uow:
        assert await is_processed(uow.session, 1)
        assert await is_processed(uow.session, 2)


async def test_storing_updates_wakes_the_other_workers_naming_each_in_the_insert_itself(
    engine: AsyncEngine, session_factory: Factory
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("one process on SQLite: the store wakes its own dispatcher directly")
    heard: list[str] = []
    async with engine.connect() as listening:
        driver = (await listening.get_raw_connection()).driver_connection
        assert driver is not None
        await driver.add_listener(INBOX_CHANNEL, lambda *args: heard.append(args[-1]))
        seen: list[str] = []

        def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            seen.append(statement.split()[0])

        event.listen(engine.sync_engine, "before_cursor_execute", record)
        try:
            async with UnitOfWork(session_factory) as uow:
                assert await uow.updates.store([received(1), received(2)], "worker-a") == [1, 2]
            failing = UnitOfWork(session_factory)
            await failing.__aenter__()
            await failing.updates.store([received(3)], "worker-b")
            await failing.__aexit__(RuntimeError, RuntimeError("failed"), None)  # rolled back
        finally:
            event.remove(engine.sync_engine, "before_cursor_execute", record)
        await driver.execute("SELECT 1")  # the notifications sent so far have arrived
    assert seen == ["INSERT", "INSERT"], "the wake-up rides in the insert: no statement of its own"
    wake_ups = [StoredElsewhere.parse(payload) for payload in heard]
    assert [(w.origin, w.update_id) for w in wake_ups if w is not None] == [
        ("worker-a", 1),
        ("worker-a", 2),
    ], "one wake-up for each update stored; none for what rolled back"
    assert wake_ups[0] == StoredElsewhere("worker-a", 1, -5, 0, False, 10**18)


def press(update_id: int, *, is_call: bool = False) -> StoredUpdate:
    query = {"id": f"q{update_id}", "data": "x"}
    payload = {"update_id": update_id, "callback_query": query}
    return StoredUpdate(update_id, -5, 0, is_call, payload, 10**18 + update_id, "h1")


async def test_a_press_changed_but_never_finished_is_listed_for_an_answer(
    session_factory: Factory,
) -> None:
    """A kill between a press's change and the end of its handlers leaves it listed, once.

    Once its handlers end, its content goes (a rolled-back drop gives it back);
    a Snap call is never listed (its race answers it) and keeps its content.
    """
    units = UnitsOfWork(session_factory)
    start = utc_now()
    async with units() as uow:
        await uow.updates.store([press(1), press(2, is_call=True), press(3)])
    async with units() as uow:
        for update_id in (1, 2, 3):
            assert await uow.updates.mark_update_processed(update_id)

    async def take() -> list[tuple[str, int]]:
        async with units() as uow:
            return await uow.updates.take_unfinished_presses(start, utc_now() + timedelta(days=1))

    async with units() as uow:
        assert await uow.updates.mark_handled(1), "its content is left to drop"
        assert not await uow.updates.mark_handled(2, keep_content=True)

    async def emptied_then_rolled_back() -> None:
        async with units() as uow:
            await uow.updates.empty_finished()
            raise RuntimeError("the drop rolls back")

    with pytest.raises(RuntimeError):
        await emptied_then_rolled_back()
    async with units() as uow:
        await uow.updates.empty_finished()
    assert await take() == [("q3", 10**18 + 3)], "changed, its handlers never ended"
    assert await take() == [], "listed once"
    async with units(read_only=True) as uow:
        (call,) = await uow.updates.stored_updates([2])
    assert call.payload["callback_query"]["id"] == "q2", "a call keeps its content for its race"
