"""Firing due timers: each in its own transaction, which also marks it fired."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..game import LeaveReason
from ..storage.models import Game as GameRow
from ..storage.models import GameStatus
from ..storage.uow import UnitOfWork
from .base import Service
from .lobby import lobby_view
from .play import end_if_flip_limit
from .store import LoadedGame
from .timers import RETRY_DURING_RACE, AbsentPlayer, TimerKind
from .types import Place
from .views import LobbyView, PlayOutcome


@dataclass(frozen=True, slots=True)
class TimerOutcome:
    """What a fired timer did, for the chat to see."""

    kind: TimerKind
    place: Place
    play: PlayOutcome | None = None
    lobby: LobbyView | None = None
    absent: AbsentPlayer | None = None


class TimerService(Service):
    """Fires the timers that are due, on the planner's clock."""

    def now(self) -> datetime:
        """The current time on the timers' clock."""
        return self._store.planner.now()

    async def next_due_at(self) -> datetime | None:
        """When the earliest timer is due (None: no timer is set)."""
        async with UnitOfWork(self._sessions) as uow:
            return await uow.timers.next_due_at()

    async def fire_due(self) -> list[TimerOutcome]:
        """Fire every timer due now; return what they did."""
        now = self._store.planner.now()
        async with UnitOfWork(self._sessions) as uow:
            due = [(timer.id, timer.kind, Place(timer.chat_id, timer.thread_id), timer.game_id,
                    dict(timer.payload)) for timer in await uow.timers.due(now)]  # fmt: skip
        outcomes = []
        for timer_id, kind, place, game_id, payload in due:
            outcome = await self._fire(timer_id, TimerKind(kind), place, game_id, payload, now)
            if outcome is not None:
                outcomes.append(outcome)
        return outcomes

    async def _fire(
        self,
        timer_id: int,
        kind: TimerKind,
        place: Place,
        game_id: int | None,
        payload: dict[str, str],
        now: datetime,
    ) -> TimerOutcome | None:
        async with self._change(place, None) as uow:
            if not await uow.timers.mark_fired(timer_id, now) or game_id is None:
                return None
            row = await uow.games.get(game_id)
            if row is None:
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
            started = row.turn_started_at
            if started is None or payload.get("turn_started_at") != started.isoformat():
                # The turn moved on since this timer was set: time the new turn.
                await self._store.planner.arm_turn(uow, row, TimerKind.TURN_REMINDER, timer_s)
                return None
            if kind is TimerKind.TURN_REMINDER:
                await self._store.planner.arm_turn(uow, row, TimerKind.TURN_EXPIRY, 2 * timer_s)
                return TimerOutcome(
                    kind, place, absent=self._absent(loaded, loaded.game.turn, "reminded")
                )
            return await self._act_for_absent(uow, place, row, loaded)

    @staticmethod
    def _absent(loaded: LoadedGame, seat: int, action: str, removed: bool = False) -> AbsentPlayer:
        return AbsentPlayer(loaded.user_ids[seat], loaded.names[seat], action, removed)

    async def _act_for_absent(
        self, uow: UnitOfWork, place: Place, row: GameRow, loaded: LoadedGame
    ) -> TimerOutcome:
        game = loaded.game
        seat = game.turn
        before = len(game.history)
        skipping = loaded.settings.away_action == "skip"
        if skipping:
            game.skip(seat)
        else:
            game.flip(seat)
            end_if_flip_limit(loaded)
        player = await uow.games.get_player(row.id, loaded.user_ids[seat])
        streak = loaded.afk_streaks[seat] = loaded.afk_streaks.get(seat, 0) + 1
        if player is not None:
            player.afk_streak = streak
            player.afk_total += 1
        action = "skipped" if skipping else "auto_flipped"
        removed = streak >= loaded.settings.afk_limit and game.can_remove(seat)
        if removed:
            game.remove(seat, LeaveReason.AFK)
            if player is not None:
                player.left_at = self._store.planner.now()
                player.leave_reason = LeaveReason.AFK.value
        operations = tuple(game.history[before:])
        await self._store.save(uow, row, loaded, operations, actor=None, receipt=None, human=False)
        if not game.is_over and loaded.settings.turn_timer_s is not None:
            planner = self._store.planner
            await planner.arm_turn(uow, row, TimerKind.TURN_REMINDER, loaded.settings.turn_timer_s)
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
        idle_for = now - row.last_action_at
        if idle_for < limit:
            await self._store.planner.add(uow, TimerKind.IDLE, limit - idle_for, row)
            return None
        before = len(loaded.game.history)
        loaded.game.abandon()
        operations = tuple(loaded.game.history[before:])
        await self._store.save(uow, row, loaded, operations, actor=None, receipt=None, human=False)
        self._store.forget(row.id)
        return TimerOutcome(TimerKind.IDLE, place, play=PlayOutcome(loaded.table(), operations))

    async def _end_by_time(
        self, uow: UnitOfWork, place: Place, row: GameRow, loaded: LoadedGame
    ) -> TimerOutcome:
        before = len(loaded.game.history)
        loaded.game.end_by_limit()
        operations = tuple(loaded.game.history[before:])
        await self._store.save(uow, row, loaded, operations, actor=None, receipt=None, human=False)
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
        return TimerOutcome(TimerKind.LOBBY_EXPIRY, place, lobby=await lobby_view(uow, row))
