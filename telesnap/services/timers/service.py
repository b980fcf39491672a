"""Firing due timers: each in its own transaction, which also marks it fired.

What a timer must show goes to the durable outbox in that transaction. Each timer is its
own failure boundary: one that raises is rolled back and retried later with backoff, set
aside after :data:`MAX_TIMER_FAILURES`, and the timers after it fire as usual.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from ...game import LeaveReason
from ...storage.models import Game as GameRow
from ...storage.models import GameStatus
from ...storage.models import Timer as TimerRow
from ...storage.repositories.bookkeeping import FAILURES_KEY, SET_ASIDE_KEY
from ...storage.uow import UnitOfWork
from ...support.retry import Backoff
from ..outbox.board_views import ShownBoards
from ..outbox.rows import Notice, NoticeKind, note_board, record_notice
from ..play.base import Service
from ..play.lobby import shown_lobby
from ..play.service import end_if_flip_limit
from ..play.store import GameStore, LoadedGame
from ..ports import UnitOfWorkFactory
from ..types import Place
from ..views import LobbyView, PlayOutcome
from .planner import (
    RETRY_DURING_RACE,
    RETRY_WHILE_UNSHOWN,
    AbsentPlayer,
    TimerKind,
    turn_clock_start,
)

logger = logging.getLogger(__name__)

MAX_TIMER_FAILURES = 5
"""A timer that fails this many times in a row is set aside."""
FIRST_RETRY = timedelta(seconds=5)
"""The wait before trying a failed timer again; it doubles with each failure."""
MAX_RETRY = timedelta(minutes=10)
_TIMER_BACKOFF = Backoff(FIRST_RETRY.total_seconds(), MAX_RETRY.total_seconds())


def retry_delay(failures: int) -> timedelta:
    """How long to wait before firing a timer again after its ``failures``-th failure.

    >>> [retry_delay(n).total_seconds() for n in (1, 2, 3, 9)]
    [5.0, 10.0, 20.0, 600.0]
    """
    return timedelta(seconds=_TIMER_BACKOFF.delay(failures))


@dataclass(frozen=True, slots=True)
class TimerOutcome:
    """What a fired timer did, for the chat to see."""

    kind: TimerKind
    place: Place
    play: PlayOutcome | None = None
    lobby: LobbyView | None = None
    absent: AbsentPlayer | None = None


@dataclass(frozen=True, slots=True)
class _DueTimer:
    timer_id: int
    kind: TimerKind
    place: Place
    game_id: int | None
    payload: dict[str, str]
    failures: int


class TimerService(Service):
    """Fires due timers on the planner's clock; ``set_aside_count``: given up on since the start."""

    def __init__(self, units: UnitOfWorkFactory, store: GameStore) -> None:
        super().__init__(units, store)
        self.set_aside_count = 0

    def now(self) -> datetime:
        """The current time on the timers' clock."""
        return self._store.planner.now()

    async def next_due_at(self) -> datetime | None:
        """When the earliest timer is due (None: no timer is set)."""
        async with self._units() as uow:
            return await uow.timers.next_due_at()

    async def fire_due(self) -> list[TimerOutcome]:
        """Fire every timer due now; return what they did."""
        now = self._store.planner.now()
        async with self._units() as uow:
            due = [_due_timer(timer) for timer in await uow.timers.due(now)]
        outcomes = []
        for timer in due:
            try:
                outcome = await self._fire(timer, now)
            except Exception as error:
                if not await self._failed(timer, error, now):
                    break  # the database is down: the rest wait for the next round
                continue
            if outcome is not None:
                outcomes.append(outcome)
        return outcomes

    async def _failed(self, timer: _DueTimer, error: Exception, now: datetime) -> bool:
        """Log a failure; retry later or set aside; False if noting it failed (database down)."""
        failures = timer.failures + 1
        where = (
            f"timer {timer.timer_id} ({timer.kind.value}, chat {timer.place.chat_id}, "
            f"topic {timer.place.thread_id}, game {timer.game_id})"
        )
        try:
            async with self._units() as uow:
                if failures >= MAX_TIMER_FAILURES:
                    await uow.timers.set_aside(timer.timer_id, now, failures, repr(error))
                else:
                    await uow.timers.postpone(timer.timer_id, now + retry_delay(failures), failures)
        except Exception as storing:
            # The database may be what failed: the timer is still due, so it is tried again.
            logger.exception("%s failed (%r), and so did noting it: %r", where, error, storing)
            return False
        if failures >= MAX_TIMER_FAILURES:
            self.set_aside_count += 1
            logger.error(
                "%s failed %d times; set aside (%d so far): %r",
                where,
                failures,
                self.set_aside_count,
                error,
                exc_info=error,
            )
        else:
            logger.warning(
                "%s failed (failure %d); trying again in %s: %r",
                where,
                failures,
                retry_delay(failures),
                error,
                exc_info=error,
            )
        return True

    async def _fire(self, timer: _DueTimer, now: datetime) -> TimerOutcome | None:
        async with self._change(timer.place, None) as uow:
            return await self._fire_in(uow, timer, now)

    async def _fire_in(
        self, uow: UnitOfWork, timer: _DueTimer, now: datetime
    ) -> TimerOutcome | None:
        kind, place, payload = timer.kind, timer.place, timer.payload
        # The game's row first, then the timer's: the order every change of a game takes
        # (/endgame locks the game, then deletes its timers), so two workers never deadlock.
        row = await uow.games.get(timer.game_id) if timer.game_id is not None else None
        if not await uow.timers.mark_fired(timer.timer_id, now) or row is None:
            return None
        if kind is TimerKind.LOBBY_EXPIRY:
            return await self._expire_lobby(uow, place, row, now)
        if row.status != GameStatus.RUNNING.value:
            return None
        loaded = await self._store.load(uow, row)
        if kind is TimerKind.IDLE:
            return await self._check_idle(uow, place, row, loaded, now)
        if loaded.game.is_race_open:
            await self._store.planner.add(uow, kind, RETRY_DURING_RACE, row, payload)
            return None
        if kind is TimerKind.TIME_LIMIT:
            return await self._end_by_time(uow, place, row, loaded)
        timer_s = loaded.settings.turn_timer_s
        if timer_s is None:
            return None
        started = loaded.turn_started_at
        planner = self._store.planner
        if payload.get("turn_started_at") != started.isoformat():
            # The turn moved on since this timer was set: time the new turn.
            await planner.arm_turn(uow, row, TimerKind.TURN_REMINDER, timer_s, started)
            return None
        clock_start = await _turn_clock_start(uow, row, loaded, now)
        if clock_start is None:  # the board that asks for the turn is not shown yet
            await self._store.planner.add(uow, kind, RETRY_WHILE_UNSHOWN, row, payload)
            return None
        after_s = timer_s if kind is TimerKind.TURN_REMINDER else 2 * timer_s
        if now < clock_start + timedelta(seconds=after_s):
            await planner.arm_turn(uow, row, kind, after_s, started, since=clock_start)
            return None
        if kind is TimerKind.TURN_REMINDER:
            await planner.arm_turn(
                uow, row, TimerKind.TURN_EXPIRY, 2 * timer_s, started, since=clock_start
            )
            absent = self._absent(loaded, loaded.game.turn, "reminded")
            reminder = Notice(
                NoticeKind.TURN_REMINDER, {"user_id": absent.user_id, "name": absent.name}
            )
            await record_notice(uow, place, reminder, game_id=row.id)
            return TimerOutcome(kind, place, absent=absent)
        return await self._act_for_absent(uow, place, row, loaded)

    @staticmethod
    def _absent(loaded: LoadedGame, seat: int, action: str, removed: bool = False) -> AbsentPlayer:
        return AbsentPlayer(loaded.user_ids[seat], loaded.names[seat], action, removed)

    async def _act_for_absent(
        self, uow: UnitOfWork, place: Place, row: GameRow, loaded: LoadedGame
    ) -> TimerOutcome:
        game = loaded.game
        seat = game.turn
        skipping = loaded.settings.away_action == "skip"
        streak = loaded.afk_streaks.get(seat, 0) + 1

        player = await uow.games.get_player(row.id, loaded.user_ids[seat])
        loaded.afk_streaks[seat] = streak
        if player is not None:
            player.afk_streak = streak
            player.afk_total += 1

        def act() -> bool:
            """Skip or flip for the absent player; remove them at the away limit."""
            if skipping:
                game.skip(seat)
            else:
                game.flip(seat)
                end_if_flip_limit(loaded)
            removing = streak >= loaded.settings.afk_limit and game.can_remove(seat)
            if removing:
                game.remove(seat, LeaveReason.AFK)
                if player is not None:  # before the save, whose events read it
                    player.left_at = self._store.planner.now()
                    player.leave_reason = LeaveReason.AFK.value
            return removing

        removed, operations = await self._apply(uow, row, loaded, act, actor=None, receipt=None)
        action = "skipped" if skipping else "auto_flipped"
        why = NoticeKind.SKIPPED if skipping else NoticeKind.AUTO_FLIPPED
        absent = {"user_id": loaded.user_ids[seat], "name": loaded.names[seat]}
        await note_board(uow, place, row.id, Notice(why, absent))
        if not game.is_over and loaded.settings.turn_timer_s is not None:
            planner = self._store.planner
            await planner.arm_turn(
                uow,
                row,
                TimerKind.TURN_REMINDER,
                loaded.settings.turn_timer_s,
                loaded.turn_started_at,
            )
        return TimerOutcome(
            TimerKind.TURN_EXPIRY,
            place,
            play=PlayOutcome(loaded.table(), operations),
            absent=self._absent(loaded, seat, action, removed),
        )

    async def _check_idle(
        self, uow: UnitOfWork, place: Place, row: GameRow, loaded: LoadedGame, now: datetime
    ) -> TimerOutcome | None:
        limit = timedelta(minutes=loaded.settings.idle_limit_min)
        idle_for = now - loaded.last_action_at
        if idle_for < limit:
            await self._store.planner.add(uow, TimerKind.IDLE, limit - idle_for, row)
            return None
        _, operations = await self._apply(
            uow, row, loaded, loaded.game.abandon, actor=None, receipt=None
        )
        await note_board(uow, place, row.id, Notice(NoticeKind.IDLE_ABANDONED))
        self._store.forget(row.id)
        return TimerOutcome(TimerKind.IDLE, place, play=PlayOutcome(loaded.table(), operations))

    async def _end_by_time(
        self, uow: UnitOfWork, place: Place, row: GameRow, loaded: LoadedGame
    ) -> TimerOutcome:
        _, operations = await self._apply(
            uow, row, loaded, loaded.game.end_by_limit, actor=None, receipt=None
        )
        await note_board(uow, place, row.id, Notice(NoticeKind.TIME_UP))
        return TimerOutcome(
            TimerKind.TIME_LIMIT, place, play=PlayOutcome(loaded.table(), operations)
        )

    async def _expire_lobby(
        self, uow: UnitOfWork, place: Place, row: GameRow, now: datetime
    ) -> TimerOutcome | None:
        if row.status != GameStatus.LOBBY.value:
            return None
        row.status = GameStatus.CANCELLED.value
        row.ended_at = now
        lobby = await shown_lobby(uow, place, row, self._store.planner)
        await record_notice(uow, place, Notice(NoticeKind.LOBBY_EXPIRED), game_id=row.id)
        return TimerOutcome(TimerKind.LOBBY_EXPIRY, place, lobby=lobby)


async def _turn_clock_start(
    uow: UnitOfWork, row: GameRow, loaded: LoadedGame, now: datetime
) -> datetime | None:
    """When the current turn's clock started (None: its board is not shown yet).

    Its board is the version the last turn ended at. A skip leaves the version as it was and
    writes a board of it: the turn after a skip runs from when that row, the version's newest,
    was shown (a repost after a restart, newer still, gives the player more time, never less).
    """
    started = loaded.turn_started_at
    game = loaded.game
    version = max(game.turn_ended_at, default=0)
    if version > game.board_version:
        shown_at = await ShownBoards.newest_row_shown_at(uow, row.id, game.board_version)
    else:
        shown_at = await ShownBoards.stored_shown_at(uow, row.id, version)
    return turn_clock_start(started, shown_at, now)


def _due_timer(timer: TimerRow) -> _DueTimer:
    payload = dict(timer.payload)
    failures = int(payload.pop(FAILURES_KEY, 0))
    payload.pop(SET_ASIDE_KEY, None)
    return _DueTimer(
        timer.id,
        TimerKind(timer.kind),
        Place(timer.chat_id, timer.thread_id),
        timer.game_id,
        payload,
        failures,
    )
