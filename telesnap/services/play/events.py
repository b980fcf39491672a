"""Domain events: what the game store emits when a stored game changes, and who handles it.

Handlers run in the change's unit of work, before it commits, so what they write commits
or rolls back with the change itself.

>>> async def log_ends(uow: UnitOfWork, event: GameEnded) -> None: ...
>>> events = DomainEvents()
>>> events.subscribe(GameEnded, log_ends)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from ...game import Operation
from ...storage.models import Game as GameRow
from ...storage.uow import UnitOfWork
from ..settings import GameSettings
from ..stats.recorder import record_game_result
from ..timers.planner import TimerPlanner


@dataclass(frozen=True)
class GameEnded:
    """A game has just ended: its row is marked as ended and its whole history stored."""

    row: GameRow
    history: Sequence[Operation]
    user_ids: Sequence[int]
    """The user of each engine seat."""


@dataclass(frozen=True)
class GameChanged:
    """Operations were appended to a game's stored history (emitted after :class:`GameEnded`)."""

    row: GameRow
    settings: GameSettings
    operations: tuple[Operation, ...]
    turn_started_at: datetime
    """When the game's current turn began (this change's time, if it began a turn)."""


DomainEvent = GameEnded | GameChanged
"""Every event the store emits."""

E = TypeVar("E", GameEnded, GameChanged)

Handler = Callable[[UnitOfWork, E], Awaitable[None]]
"""A handler: runs inside the unit of work that made the change."""


class DomainEvents:
    """The handlers of each kind of event, run in the order they subscribed."""

    def __init__(self) -> None:
        self._handlers: dict[type[DomainEvent], list[Callable[[UnitOfWork, Any], Awaitable[None]]]]
        self._handlers = {}

    def subscribe(self, event_type: type[E], handler: Handler[E]) -> None:
        """Run ``handler`` for every event of ``event_type``."""
        self._handlers.setdefault(event_type, []).append(handler)

    async def emit(self, uow: UnitOfWork, event: DomainEvent) -> None:
        """Run the handlers of ``event`` in ``uow``; a handler's failure fails the change."""
        for handler in self._handlers.get(type(event), ()):
            await handler(uow, event)


async def record_stats(uow: UnitOfWork, event: GameEnded) -> None:
    """Store the stats of an ended game."""
    await record_game_result(uow, event.row, event.history, event.user_ids)


def timer_planning(planner: TimerPlanner) -> Handler[GameChanged]:
    """The handler that re-arms (or clears) a changed game's timers with ``planner``."""

    async def plan_timers(uow: UnitOfWork, event: GameChanged) -> None:
        await planner.after_change(
            uow, event.row, event.settings, event.operations, event.turn_started_at
        )

    return plan_timers


def default_events(planner: TimerPlanner) -> DomainEvents:
    """The handlers every game store needs: stats recorded at the end, timers planned."""
    events = DomainEvents()
    events.subscribe(GameEnded, record_stats)
    events.subscribe(GameChanged, timer_planning(planner))
    return events
