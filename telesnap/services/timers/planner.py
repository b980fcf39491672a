"""Timers that keep asynchronous games moving: turn reminders, absent players, expiries.

Timers live in the database, written in the transaction of the change that set them, so a
restart loses none; each fires in the transaction that marks it fired, so none fires twice.
The clock is injected, so tests move time instead of waiting. A turn is known by when it
began (read back from the history), and its one timer row is re-armed only when it fires.
Its clock runs from when its board was shown, not from the commit: a board the pace holds
back must not eat into the player's time (:func:`turn_clock_start`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ...game import GameEnded, GameStarted, Operation
from ...storage.models import Game as GameRow
from ...storage.models.base import utc_now
from ...storage.uow import UnitOfWork
from ..settings import GameSettings

RETRY_DURING_RACE = timedelta(seconds=2)
RETRY_WHILE_UNSHOWN = timedelta(seconds=1)
"""How soon a turn timer looks again while the board that asks for the turn is not shown."""
UNSHOWN_BOARD_GRACE = timedelta(seconds=65)
"""How long a turn's board may be held back (the pace: a minute) before its clock runs anyway."""


LONGEST_LOBBY = timedelta(hours=24)
"""How far ahead a lobby's expiry may be pushed (``/extend``): the longest the setting allows."""


class LobbyTooLongError(ValueError):
    """An extension would keep a lobby open longer than :data:`LONGEST_LOBBY` from now."""

    def __init__(self, closes_at: datetime) -> None:
        super().__init__(f"the lobby may stay open {LONGEST_LOBBY} at most (it closes {closes_at})")
        self.closes_at = closes_at


class TimerKind(enum.Enum):
    """What a timer does when it fires."""

    TURN_REMINDER = "turn_reminder"
    TURN_EXPIRY = "turn_expiry"
    LOBBY_EXPIRY = "lobby_expiry"
    IDLE = "idle"
    TIME_LIMIT = "time_limit"


class TimerPlanner:
    """Sets and clears timers inside the services' transactions, on an injectable clock."""

    def __init__(self, clock: Callable[[], datetime] = utc_now) -> None:
        self._clock = clock
        self._listeners: list[Callable[[datetime], None]] = []
        self._earliest: datetime | None = None

    def now(self) -> datetime:
        """The current time on this planner's clock."""
        return self._clock()

    def subscribe(self, listener: Callable[[datetime], None]) -> None:
        """Call ``listener(due_at)`` after a commit that set a timer (the earliest one)."""
        self._listeners.append(listener)

    def notify(self) -> None:
        """Tell the listeners about the earliest timer set since the last notice, if any."""
        earliest, self._earliest = self._earliest, None
        if earliest is None:
            return
        for listener in self._listeners:
            listener(earliest)

    def _note(self, due_at: datetime) -> datetime:
        if self._earliest is None or due_at < self._earliest:
            self._earliest = due_at
        return due_at

    async def add(
        self,
        uow: UnitOfWork,
        kind: TimerKind,
        after: timedelta,
        row: GameRow,
        payload: dict[str, Any] | None = None,
    ) -> None:
        """Set a timer of ``kind`` for ``row``'s game, due ``after`` from now."""
        due_at = self._note(self.now() + after)
        await uow.timers.add(kind.value, due_at, row.chat_id, row.thread_id, row.id, payload or {})

    async def lobby_opened(self, uow: UnitOfWork, row: GameRow, settings: GameSettings) -> None:
        """A lobby expires if nobody starts it."""
        await self.add(uow, TimerKind.LOBBY_EXPIRY, timedelta(minutes=settings.lobby_expiry_min),
                       row)  # fmt: skip

    async def lobby_closes_at(self, uow: UnitOfWork, row: GameRow) -> datetime | None:
        """When ``row``'s lobby expires (None: no expiry is set)."""
        timer = await uow.timers.pending_for_game(row.id, TimerKind.LOBBY_EXPIRY.value)
        return timer.due_at if timer is not None else None

    async def extend_lobby(self, uow: UnitOfWork, row: GameRow, more: timedelta) -> datetime:
        """Push the lobby expiry ``more`` later; the new time, or :class:`LobbyTooLongError`."""
        timer = await uow.timers.pending_for_game(row.id, TimerKind.LOBBY_EXPIRY.value)
        now = self.now()
        closes_at = max(timer.due_at, now) + more if timer is not None else now + more
        if closes_at - now > LONGEST_LOBBY:
            raise LobbyTooLongError(timer.due_at if timer is not None else now)
        if timer is None:
            await self.add(uow, TimerKind.LOBBY_EXPIRY, more, row)
        else:
            timer.due_at = closes_at
        return closes_at

    async def after_change(
        self,
        uow: UnitOfWork,
        row: GameRow,
        settings: GameSettings,
        operations: tuple[Operation, ...],
        turn_started_at: datetime,
    ) -> None:
        """Re-arm the game's timers after ``operations`` (clear them all once it ended).

        The turn timer is set at the start, not moved on every move: firing for a turn that has
        moved on, it re-arms itself for the turn that began at ``turn_started_at``.
        """
        if any(isinstance(op, GameEnded) for op in operations):
            await uow.timers.cancel_for_game(row.id)
            return
        if not any(isinstance(op, GameStarted) for op in operations):
            return
        await uow.timers.cancel_for_game(row.id, TimerKind.LOBBY_EXPIRY.value)
        await self.add(uow, TimerKind.IDLE, timedelta(minutes=settings.idle_limit_min), row)
        if settings.time_limit_min is not None:
            await self.add(
                uow, TimerKind.TIME_LIMIT, timedelta(minutes=settings.time_limit_min), row
            )
        if settings.turn_timer_s is not None:
            await self.arm_turn(
                uow, row, TimerKind.TURN_REMINDER, settings.turn_timer_s, turn_started_at
            )

    async def arm_turn(
        self,
        uow: UnitOfWork,
        row: GameRow,
        kind: TimerKind,
        after_turn_start_s: int,
        turn_started_at: datetime,
        *,
        since: datetime | None = None,
    ) -> None:
        """Set the turn timer ``kind`` for the turn that began at ``turn_started_at``.

        ``since``: when its board was shown (default: the turn's start); it looks again on firing.
        """
        due_at = self._note((since or turn_started_at) + timedelta(seconds=after_turn_start_s))
        payload = {"turn_started_at": turn_started_at.isoformat()}
        await uow.timers.add(kind.value, due_at, row.chat_id, row.thread_id, row.id, payload)


def turn_clock_start(
    turn_started_at: datetime, turn_board_shown_at: datetime | None, now: datetime
) -> datetime | None:
    """When a turn's clock starts: when the board that asks for the turn was shown.

    None while that board is not shown (the pace holds it), for at most
    :data:`UNSHOWN_BOARD_GRACE`, so a board that never gets out does not stop the game. A
    board shown before the turn began starts nothing: the turn runs from its change.

    >>> from datetime import UTC
    >>> began = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    >>> turn_clock_start(began, began + timedelta(seconds=6.4), began).second
    6
    >>> turn_clock_start(began, None, began + timedelta(seconds=3)) is None
    True
    >>> turn_clock_start(began, None, began + timedelta(minutes=5)).second
    5
    >>> turn_clock_start(began, began - timedelta(seconds=9), began) == began
    True
    """
    if turn_board_shown_at is None:
        if now - turn_started_at < UNSHOWN_BOARD_GRACE:
            return None
        return turn_started_at + UNSHOWN_BOARD_GRACE
    return max(turn_started_at, turn_board_shown_at)


@dataclass(frozen=True, slots=True)
class AbsentPlayer:
    """What a timer did about a player; ``removed``: that was one absence too many."""

    user_id: int
    name: str
    action: str  # "reminded", "auto_flipped" or "skipped"
    removed: bool = False
