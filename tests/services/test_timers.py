"""Timers on a controlled clock: reminders, absent players, expiries, restarts."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import EndReason, LeaveReason, PlayerLeft, TurnSkipped
from telesnap.services.chat_settings import SettingsService
from telesnap.services.play.events import GameChanged
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.timers.planner import TimerKind, TimerPlanner
from telesnap.services.timers.service import TimerService
from telesnap.services.types import Actor, Place, Receipt
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .boards_sent import shown_in

PLACE = Place(chat_id=-200, chat_type="group", title="Slow club")
ANN, BOB, CID = Actor(1, "Ann"), Actor(2, "Bob"), Actor(3, "Cid")
_update_ids = itertools.count(9000)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def receipt() -> Receipt:
    return Receipt(0, datetime.now(UTC), next(_update_ids))


def boards_shown_on_commit(store: GameStore, clock: Clock) -> BoardsShown:
    """Each change's board is shown the moment it commits, unless the test holds them."""
    shown = BoardsShown()

    async def record_view(uow: UnitOfWork, event: GameChanged) -> None:
        if not shown.held:
            row = event.row
            loaded = store.cached(row.id) or await store.load(uow, row)
            version = loaded.game.board_version
            await shown_in(uow, PLACE, row.id, version, 1, clock())

    store.events.subscribe(GameChanged, record_view)
    return shown


@dataclass
class BoardsShown:
    held: bool = False
    """True: the boards wait (for the pace); the test says when one is shown."""


class World:
    """The services of one bot process, on a shared clock."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        store = GameStore(TimerPlanner(clock))
        self.boards = boards_shown_on_commit(store, clock)
        self.lobby = LobbyService(UnitsOfWork(sessions), store, shuffle_seed=11)
        self.play = PlayService(UnitsOfWork(sessions), store)
        self.settings = SettingsService(UnitsOfWork(sessions), store)
        self.timers = TimerService(UnitsOfWork(sessions), store)


async def world_with(
    sessions: async_sessionmaker[AsyncSession], clock: Clock, **settings: Any
) -> World:
    world = World(sessions, clock)
    for name, value in settings.items():
        await world.settings.change(PLACE, ANN, name, value, is_admin=known_admin(True))
    return world


async def start(world: World, players: tuple[Actor, ...] = (ANN, BOB, CID)) -> None:
    await world.lobby.open(PLACE, players[0], receipt())
    for player in players[1:]:
        await world.lobby.join(PLACE, player, receipt())
    await world.lobby.start(PLACE, players[0], is_admin=known_admin(False), receipt=receipt())


async def turn_actor(world: World) -> Actor:
    turn = (await world.play.table(PLACE)).table.turn_player
    assert turn is not None
    return Actor(turn.user_id, turn.name)


def kinds(outcomes: list[Any]) -> list[TimerKind]:
    return [outcome.kind for outcome in outcomes]


async def show_board(world: World, sessions: async_sessionmaker[AsyncSession], at: Clock) -> None:
    """The board the pace held reaches Telegram now: the outbox records its view."""
    table = (await world.play.table(PLACE)).table
    async with UnitsOfWork(sessions)() as uow:
        await shown_in(uow, PLACE, table.game_id, table.board_version, 9, at())


async def test_a_turn_runs_from_the_moment_its_board_is_shown_not_from_its_commit(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="10")
    world.boards.held = True  # the pace holds the start board back
    await start(world)
    clock.advance(seconds=6.4)
    await show_board(world, session_factory, clock)
    clock.advance(seconds=3.6)  # 10 s after the commit, 3.6 s after the board appeared
    assert await world.timers.fire_due() == []
    clock.advance(seconds=6.3)
    assert await world.timers.fire_due() == []
    clock.advance(seconds=0.1)  # 10 s after the board appeared
    (reminder,) = await world.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER
    clock.advance(seconds=9.9)
    assert await world.timers.fire_due() == []
    clock.advance(seconds=0.1)  # 20 s after the board appeared
    (flipped,) = await world.timers.fire_due()
    assert flipped.absent.action == "auto_flipped"


async def test_a_turn_whose_board_is_not_shown_yet_waits_for_it(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="10")
    world.boards.held = True
    await start(world)
    clock.advance(seconds=30)  # the board is still held: no reminder about a board unseen
    assert await world.timers.fire_due() == []
    await show_board(world, session_factory, clock)
    clock.advance(seconds=9.5)
    assert await world.timers.fire_due() == []
    clock.advance(seconds=0.5)
    (reminder,) = await world.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER


async def test_r27_a_reminder_then_an_auto_flip(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="60")
    await start(world)
    absent = await turn_actor(world)
    clock.advance(seconds=59)
    assert await world.timers.fire_due() == []
    clock.advance(seconds=1)
    (reminder,) = await world.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER
    assert reminder.absent.user_id == absent.user_id
    assert reminder.absent.action == "reminded"
    clock.advance(seconds=60)
    (flipped,) = await world.timers.fire_due()
    assert flipped.absent.action == "auto_flipped"
    assert flipped.play.table.flips == 1
    assert (await turn_actor(world)).user_id != absent.user_id
    assert await world.timers.fire_due() == []


async def test_r27_a_flip_in_time_cancels_the_turn_timer(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="60")
    await start(world)
    clock.advance(seconds=30)
    await world.play.flip(PLACE, await turn_actor(world), receipt())
    clock.advance(seconds=45)
    assert await world.timers.fire_due() == []  # the new turn's timer has 15 s to go
    clock.advance(seconds=15)
    assert kinds(await world.timers.fire_due()) == [TimerKind.TURN_REMINDER]


async def test_r27_skipping_absent_players_and_removing_them_after_the_afk_limit(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(
        session_factory, clock, turn_timer="10", when_away="skip", afk_limit="2"
    )
    await start(world, (ANN, BOB))
    actions = []
    for _ in range(4):
        clock.advance(seconds=10)
        await world.timers.fire_due()
        clock.advance(seconds=10)
        (outcome,) = await world.timers.fire_due()
        actions.append((outcome.absent.action, outcome.absent.removed))
        if outcome.play.table.is_over:
            break
    assert actions == [("skipped", False), ("skipped", False), ("skipped", True)]
    last = outcome.play
    assert any(isinstance(op, TurnSkipped) for op in last.operations)
    left = [op for op in last.operations if isinstance(op, PlayerLeft)]
    assert [op.leave_reason for op in left] == [LeaveReason.AFK]
    assert last.table.is_over
    assert last.table.flips == 0


async def test_a_human_flip_resets_the_absence_count(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="10", afk_limit="2")
    await start(world, (ANN, BOB))
    away = await turn_actor(world)

    async def let_the_timer_act() -> str:
        clock.advance(seconds=10)
        await world.timers.fire_due()
        clock.advance(seconds=10)
        (outcome,) = await world.timers.fire_due()
        return str(outcome.absent.action)

    assert await let_the_timer_act() == "auto_flipped"  # one absence
    await world.play.flip(PLACE, await turn_actor(world), receipt())  # the other player
    await world.play.flip(PLACE, away, receipt())  # back: the count starts again
    await world.play.flip(PLACE, await turn_actor(world), receipt())
    assert await let_the_timer_act() == "auto_flipped"  # one absence again, not two


async def test_an_unstarted_lobby_expires(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, lobby_expiry="30")
    await world.lobby.open(PLACE, ANN, receipt())
    clock.advance(minutes=30)
    (expired,) = await world.timers.fire_due()
    assert expired.kind is TimerKind.LOBBY_EXPIRY
    assert expired.lobby.status == "cancelled"
    reopened = await world.lobby.open(PLACE, BOB, receipt())
    assert reopened.lobby.player_names == ("Bob",)


async def test_a_started_lobby_does_not_expire(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, lobby_expiry="30", turn_timer="off")
    await start(world)
    clock.advance(minutes=31)
    assert await world.timers.fire_due() == []


async def test_an_idle_game_is_abandoned_and_frees_the_chat(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="off", idle_limit="60")
    await start(world)
    clock.advance(minutes=40)
    await world.play.flip(PLACE, await turn_actor(world), receipt())
    clock.advance(minutes=20)
    assert await world.timers.fire_due() == []  # 20 minutes since the last move
    clock.advance(minutes=40)
    (abandoned,) = await world.timers.fire_due()
    assert abandoned.kind is TimerKind.IDLE
    assert abandoned.play.table.end_reason is EndReason.ABANDONED
    await world.lobby.open(PLACE, ANN, receipt())


async def test_the_time_limit_ends_the_game_with_the_most_cards_winning(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="off", time_limit="15")
    await start(world)
    clock.advance(minutes=15)
    (ended,) = await world.timers.fire_due()
    assert ended.kind is TimerKind.TIME_LIMIT
    assert ended.play.table.end_reason is EndReason.LIMIT
    assert ended.play.table.winners


async def test_a_restart_between_reminder_and_expiry_loses_no_timer_and_fires_none_twice(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    before = await world_with(session_factory, clock, turn_timer="60")
    await start(before)
    clock.advance(seconds=60)
    assert kinds(await before.timers.fire_due()) == [TimerKind.TURN_REMINDER]
    after = World(session_factory, clock)  # a new process: fresh caches, same database
    clock.advance(seconds=60)
    fired: Callable[[], Any] = after.timers.fire_due
    first, second = await fired(), await before.timers.fire_due()
    assert kinds(first) == [TimerKind.TURN_EXPIRY]
    assert second == []
    assert (await after.play.table(PLACE)).table.flips == 1


async def test_after_a_restart_the_turn_runs_from_the_move_that_began_it(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    before = await world_with(session_factory, clock, turn_timer="60")
    await start(before)
    clock.advance(seconds=40)
    await before.play.flip(PLACE, await turn_actor(before), receipt())
    clock.advance(seconds=30)
    after = World(session_factory, clock)  # a new process: the history is all it knows
    on_turn = await turn_actor(after)
    clock.advance(seconds=29)  # 99 s since the start, 59 s since the flip
    assert await after.timers.fire_due() == []
    clock.advance(seconds=1)
    (reminder,) = await after.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER
    assert reminder.absent.user_id == on_turn.user_id


async def test_after_a_restart_an_idle_game_counts_from_the_last_move(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    before = await world_with(session_factory, clock, turn_timer="off", idle_limit="60")
    await start(before)
    clock.advance(minutes=40)
    await before.play.flip(PLACE, await turn_actor(before), receipt())
    after = World(session_factory, clock)
    clock.advance(minutes=59)
    assert await after.timers.fire_due() == []  # 99 minutes since the start
    clock.advance(minutes=1)
    (abandoned,) = await after.timers.fire_due()
    assert abandoned.play.table.end_reason is EndReason.ABANDONED


@pytest.mark.parametrize("value", ["5", "100000", "soon"])
async def test_a_bad_timer_value_changes_nothing(
    session_factory: async_sessionmaker[AsyncSession], value: str
) -> None:
    from telesnap.services.types import Reason, Refused

    world = World(session_factory, Clock())
    with pytest.raises(Refused) as refused:
        await world.settings.change(PLACE, ANN, "turn_timer", value, is_admin=known_admin(True))
    assert refused.value.reason is Reason.BAD_SETTING_VALUE
    assert refused.value.details["allowed"] == "10-86400, off"
    assert (await world.settings.show(PLACE)).turn_timer_s == 300


async def test_another_seat_leaving_keeps_the_turn_clock_of_the_player_on_turn(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="60")
    await start(world, (ANN, BOB, CID, Actor(4, "Dee")))
    on_turn = await turn_actor(world)
    leaver = next(p for p in (ANN, BOB, CID) if p.user_id != on_turn.user_id)
    clock.advance(seconds=50)
    await world.lobby.leave(PLACE, leaver, receipt())
    assert (await turn_actor(world)).user_id == on_turn.user_id
    clock.advance(seconds=10)  # 60 s since the turn began, 10 s since the other seat left
    (reminder,) = await world.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER
    assert reminder.absent.user_id == on_turn.user_id


async def test_the_player_on_turn_leaving_starts_the_next_players_clock(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="60")
    await start(world)
    on_turn = await turn_actor(world)
    clock.advance(seconds=50)
    await world.lobby.leave(PLACE, on_turn, receipt())
    following = await turn_actor(world)
    clock.advance(seconds=59)
    assert [o for o in await world.timers.fire_due() if o.absent is not None] == []
    clock.advance(seconds=1)
    (reminder,) = await world.timers.fire_due()
    assert reminder.absent.user_id == following.user_id


async def test_the_turn_after_a_skip_runs_from_when_the_board_saying_so_is_shown(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="10", when_away="skip")
    await start(world)
    clock.advance(seconds=10)
    (reminded,) = await world.timers.fire_due()
    assert reminded.absent.action == "reminded"
    world.boards.held = True  # the pace holds the skip's board back
    clock.advance(seconds=10)
    (skipped,) = await world.timers.fire_due()
    assert skipped.absent.action == "skipped"
    clock.advance(seconds=6)
    await show_board(world, session_factory, clock)  # 6 s after the skip
    clock.advance(seconds=4)  # 10 s after the skip: the next player saw it only 4 s ago
    assert await world.timers.fire_due() == []
    clock.advance(seconds=6)  # 10 s after the board appeared
    (reminder,) = await world.timers.fire_due()
    assert reminder.kind is TimerKind.TURN_REMINDER
    assert reminder.absent.user_id != skipped.absent.user_id
