"""A timer and /endgame lock a game's rows in one order: the game first, then its timers.

In opposite orders, a timer firing on one worker and /endgame on another could each
hold one row and wait for the other's (a deadlock on PostgreSQL).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from ..admin import known_admin
from .sql_log import statements
from .test_timers import ANN, PLACE, Clock, receipt, start, world_with

DUE_TIMERS_QUERY = "timers.due_at <="
"""The query that picks the due timers (its own transaction, before any is fired)."""


def first(seen: list[str], *fragments: str) -> int:
    return next(i for i, sql in enumerate(seen) if all(f in sql for f in fragments))


async def test_a_firing_timer_and_endgame_take_the_game_before_its_timers(
    engine: AsyncEngine, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="60")
    await start(world)
    clock.advance(seconds=60)
    with statements(engine) as fired:
        (reminder,) = await world.timers.fire_due()
    assert reminder.absent.action == "reminded"
    firing = fired[first(fired, DUE_TIMERS_QUERY) + 1 :]
    assert first(firing, "FROM games") < first(firing, "UPDATE timers")

    with statements(engine) as ended:
        await world.lobby.end(PLACE, ANN, is_admin=known_admin(True), receipt=receipt())
    assert first(ended, "FROM games") < first(ended, "DELETE FROM timers")
