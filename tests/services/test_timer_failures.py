"""One failing timer never blocks the others: it is retried with backoff, then set aside."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import event, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.services.timers.planner import TimerKind
from telesnap.services.timers.service import MAX_TIMER_FAILURES, retry_delay
from telesnap.services.types import Actor, Place
from telesnap.storage.models import GameOperation, Timer

from ..admin import known_admin
from .test_timers import ANN, BOB, Clock, World, receipt

BROKEN = Place(chat_id=-301, chat_type="group", title="Broken club")
HEALTHY = Place(chat_id=-302, chat_type="group", title="Healthy club")
CID, DAN = Actor(3, "Cid"), Actor(4, "Dan")


async def start_in(world: World, place: Place, first: Actor, second: Actor) -> int:
    await world.settings.change(place, first, "turn_timer", "60", is_admin=known_admin(True))
    await world.lobby.open(place, first, receipt())
    await world.lobby.join(place, second, receipt())
    started = await world.lobby.start(place, first, is_admin=known_admin(False), receipt=receipt())
    return started.play.table.game_id


async def break_history(sessions: async_sessionmaker[AsyncSession], game_id: int) -> None:
    """Store an operation that cannot be read back, as a bug or a bad edit would."""
    async with sessions() as session, session.begin():
        await session.execute(
            update(GameOperation)
            .where(GameOperation.game_id == game_id, GameOperation.seq == 1)
            .values(payload={"kind": "no_such_operation"})
        )


async def timer_of(sessions: async_sessionmaker[AsyncSession], game_id: int) -> Timer:
    async with sessions() as session:
        timers = list(
            await session.scalars(
                select(Timer).where(Timer.game_id == game_id, Timer.kind == "turn_reminder")
            )
        )
    (timer,) = timers
    return timer


async def test_a_timer_that_raises_does_not_stop_the_timers_after_it(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    broken = await start_in(world, BROKEN, ANN, BOB)
    healthy = await start_in(world, HEALTHY, CID, DAN)
    await break_history(session_factory, broken)
    restarted = World(session_factory, clock)  # a fresh process must replay the history
    clock.advance(seconds=60)

    outcomes = await restarted.timers.fire_due()

    assert [(o.kind, o.place.chat_id) for o in outcomes] == [
        (TimerKind.TURN_REMINDER, HEALTHY.chat_id)
    ], "the healthy chat's reminder fires, and comes back to be shown"
    assert outcomes[0].absent is not None
    failing = await timer_of(session_factory, broken)
    assert failing.fired_at is None
    assert failing.payload["failures"] == 1
    assert failing.due_at == clock.now + retry_delay(1)
    assert (await timer_of(session_factory, healthy)).fired_at is not None


async def test_a_timer_that_keeps_failing_is_retried_with_backoff_then_set_aside(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    broken = await start_in(world, BROKEN, ANN, BOB)
    await break_history(session_factory, broken)
    restarted = World(session_factory, clock)
    clock.advance(seconds=60)
    waits = []
    for failures in range(1, MAX_TIMER_FAILURES):
        assert await restarted.timers.fire_due() == []
        timer = await timer_of(session_factory, broken)
        assert timer.payload["failures"] == failures
        waits.append(timer.due_at - clock.now)
        clock.advance(seconds=1)
        assert await restarted.timers.fire_due() == [], "not tried again before its time"
        clock.now = timer.due_at
    assert waits == [retry_delay(n) for n in range(1, MAX_TIMER_FAILURES)]
    assert waits[1] == 2 * waits[0]
    assert restarted.timers.set_aside_count == 0

    assert await restarted.timers.fire_due() == []

    timer = await timer_of(session_factory, broken)
    assert timer.fired_at == clock.now, "set aside: it is due no more"
    assert timer.payload["failures"] == MAX_TIMER_FAILURES
    assert "no_such_operation" in timer.payload["set_aside"]
    assert restarted.timers.set_aside_count == 1
    clock.advance(hours=1)
    assert await restarted.timers.fire_due() == []
    assert restarted.timers.set_aside_count == 1, "tried no more"


async def test_a_timer_that_failed_once_fires_normally_when_it_works_again(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    game_id = await start_in(world, BROKEN, ANN, BOB)
    async with session_factory() as session:
        (good,) = await session.scalars(
            select(GameOperation.payload).where(
                GameOperation.game_id == game_id, GameOperation.seq == 1
            )
        )
    await break_history(session_factory, game_id)
    restarted = World(session_factory, clock)
    clock.advance(seconds=60)
    assert await restarted.timers.fire_due() == []
    async with session_factory() as session, session.begin():
        await session.execute(
            update(GameOperation)
            .where(GameOperation.game_id == game_id, GameOperation.seq == 1)
            .values(payload=good)
        )
    clock.advance(seconds=retry_delay(1).total_seconds())
    (reminder,) = await restarted.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER
    assert reminder.place.chat_id == BROKEN.chat_id


async def test_when_the_database_is_down_the_round_stops_and_every_timer_fires_later(
    engine: AsyncEngine,
    session_factory: async_sessionmaker[AsyncSession],
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    first = await start_in(world, BROKEN, ANN, BOB)
    second = await start_in(world, HEALTHY, CID, DAN)
    clock.advance(seconds=60)
    due_read = False

    def fail_after_reading_the_due_timers(
        _connection: object, _cursor: object, statement: str, *_: object
    ) -> None:
        nonlocal due_read
        if due_read:  # the due timers were read; then the database went away
            raise OperationalError("(injected)", None, ConnectionError("database unavailable"))
        due_read = "FROM timers" in statement

    event.listen(engine.sync_engine, "before_cursor_execute", fail_after_reading_the_due_timers)
    try:
        with caplog.at_level(logging.ERROR, logger="telesnap.services.timers.service"):
            assert await world.timers.fire_due() == []
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", fail_after_reading_the_due_timers)
    assert len(caplog.records) == 1, "one failure logged, not one per timer"
    for game_id in (first, second):
        timer = await timer_of(session_factory, game_id)
        assert timer.fired_at is None
        assert "failures" not in timer.payload, "a database outage is not the timer's fault"
    outcomes = await world.timers.fire_due()
    assert sorted(o.place.chat_id for o in outcomes) == sorted([BROKEN.chat_id, HEALTHY.chat_id])
