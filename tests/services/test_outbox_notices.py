"""Lobbies and notices are outbox rows written in their change's transaction, like boards."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.chat_settings import SettingsService
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.rows import BoardEntry, LobbyEntry, Notice, NoticeEntry
from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.timers.planner import TimerKind, TimerPlanner
from telesnap.services.timers.service import TimerService
from telesnap.services.types import Reason, Refused
from telesnap.storage.models import OutboxMessage, Timer
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .test_timers import (
    ANN,
    BOB,
    CID,
    PLACE,
    Clock,
    boards_shown_on_commit,
    receipt,
    start,
    turn_actor,
)

Sessions = async_sessionmaker[AsyncSession]


class CommitLostError(Exception):
    """The process died as the change was about to commit."""


class _MayLoseCommit(UnitOfWork):
    """Loses its commit (rolls back, raises) if asked to and it wrote an outbox row."""

    def __init__(self, units: Units, factory: Sessions) -> None:
        super().__init__(factory)
        self._units = units
        self._rows: list[OutboxMessage] = []

    async def __aenter__(self) -> Self:
        await super().__aenter__()
        add = self.outbox.add

        async def kept(*args: Any, **kwargs: Any) -> OutboxMessage:
            row = await add(*args, **kwargs)
            self._rows.append(row)  # the session's identity map holds rows only weakly
            return row

        self.outbox.add = kept  # type: ignore[method-assign]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        wrote_a_row = bool(self._rows)
        if exc_type is not None or not (self._units.lose_next and wrote_a_row):
            await super().__aexit__(exc_type, exc, traceback)
            return
        self._units.lose_next = False
        await super().__aexit__(CommitLostError, CommitLostError(), None)  # rolled back
        raise CommitLostError()


class Units(UnitsOfWork):
    """Units of work whose next change that writes an outbox row can be made to lose its commit."""

    def __init__(self, factory: Sessions) -> None:
        super().__init__(factory)
        self._sessions = factory
        self.lose_next = False

    def __call__(self, *, read_only: bool = False) -> UnitOfWork:
        if self.lose_next and not read_only:
            return _MayLoseCommit(self, self._sessions)
        return super().__call__(read_only=read_only)


class World:
    """The services of one process with the durable outbox, on a clock the test moves."""

    def __init__(self, sessions: Sessions, clock: Clock) -> None:
        self.sessions = sessions
        self.units = Units(sessions)
        store = GameStore(TimerPlanner(clock))
        record_boards(store)
        boards_shown_on_commit(store, clock)
        self.lobby = LobbyService(self.units, store, shuffle_seed=11)
        self.play = PlayService(self.units, store)
        self.settings = SettingsService(self.units, store)
        self.timers = TimerService(self.units, store)
        self.outbox = OutboxService(self.units)

    async def unsent(self) -> list[Any]:
        return (await self.outbox.line(PLACE.chat_id)).entries

    async def settle_all(self) -> None:
        """Everything unsent so far was shown."""
        entries = await self.unsent()
        await self.outbox.sent(Shown(PLACE.chat_id, tuple(entry.id for entry in entries), 1))


async def test_a_lobby_change_and_its_row_commit_together(session_factory: Sessions) -> None:
    world = World(session_factory, Clock())
    await world.lobby.open(PLACE, ANN, receipt())
    world.units.lose_next = True
    with pytest.raises(CommitLostError):
        await world.lobby.join(PLACE, BOB, receipt())
    (opened,) = await world.unsent()
    assert isinstance(opened, LobbyEntry)
    assert opened.lobby.player_names == ("Ann",), "the lost join left no row"
    assert await world.outbox.lobby_message(opened.game_id) is None, "none yet: it is posted"
    await world.lobby.join(PLACE, BOB, receipt())
    await world.lobby.join(PLACE, CID, receipt())
    _, *joins = await world.unsent()
    assert [entry.lobby.player_names for entry in joins] == [("Ann", "Bob"), ("Ann", "Bob", "Cid")]


async def test_a_shown_lobby_stores_its_message_and_the_next_change_edits_it(
    session_factory: Sessions,
) -> None:
    world = World(session_factory, Clock())
    await world.lobby.open(PLACE, ANN, receipt())
    await world.lobby.join(PLACE, BOB, receipt())
    entries = await world.unsent()
    game_id = entries[0].game_id
    ids = tuple(entry.id for entry in entries)
    await world.outbox.sent(Shown(PLACE.chat_id, ids, 77, lobby_of=game_id))
    await world.lobby.leave(PLACE, BOB, receipt())
    (left,) = await world.unsent()
    assert isinstance(left, LobbyEntry)
    assert left.lobby.player_names == ("Ann",)
    fresh = OutboxService(UnitsOfWork(world.sessions))
    assert await fresh.lobby_message(left.game_id) == 77, "stored with the rows it settled"


async def test_starting_shows_the_closed_lobby_before_the_first_table(
    session_factory: Sessions,
) -> None:
    world = World(session_factory, Clock())
    await start(world)  # type: ignore[arg-type]
    *_, closed, board = await world.unsent()
    assert isinstance(closed, LobbyEntry)
    assert closed.lobby.status == "running"
    assert isinstance(board, BoardEntry)


async def test_calling_off_a_lobby_closes_it_and_writes_its_notice(
    session_factory: Sessions,
) -> None:
    world = World(session_factory, Clock())
    await world.lobby.open(PLACE, ANN, receipt())
    await world.settle_all()
    await world.lobby.end(PLACE, ANN, is_admin=known_admin(False), receipt=receipt())
    closed, called_off = await world.unsent()
    assert isinstance(closed, LobbyEntry)
    assert closed.lobby.status == "cancelled", "its message shows it closed, with no buttons"
    assert isinstance(called_off, NoticeEntry)
    assert called_off.notice == Notice("called_off")


async def test_a_reminder_is_written_in_its_timers_transaction(session_factory: Sessions) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    await world.settings.change(PLACE, ANN, "turn_timer", "60", is_admin=known_admin(True))
    await start(world)  # type: ignore[arg-type]
    away = await turn_actor(world)  # type: ignore[arg-type]
    await world.settle_all()
    clock.advance(seconds=60)
    world.units.lose_next = True  # the reminder's change is lost: the timer is still due
    assert await world.timers.fire_due() == []
    assert await world.unsent() == []
    clock.advance(seconds=10)  # past the failed timer's retry
    (outcome,) = await world.timers.fire_due()
    assert outcome.kind is TimerKind.TURN_REMINDER
    (reminder,) = await world.unsent()
    assert isinstance(reminder, NoticeEntry)
    assert reminder.notice == Notice(
        "turn_reminder", {"user_id": away.user_id, "name": away.first_name}
    )
    async with session_factory() as session:
        reminders = list(
            await session.scalars(select(Timer).where(Timer.kind == TimerKind.TURN_REMINDER.value))
        )
    assert [timer.fired_at is not None for timer in reminders] == [True]


async def test_why_a_timer_flipped_rides_in_its_boards_row(session_factory: Sessions) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    await world.settings.change(PLACE, ANN, "turn_timer", "60", is_admin=known_admin(True))
    await start(world)  # type: ignore[arg-type]
    away = await turn_actor(world)  # type: ignore[arg-type]
    clock.advance(seconds=60)
    await world.timers.fire_due()  # the reminder
    await world.settle_all()
    clock.advance(seconds=120)
    await world.timers.fire_due()
    (board,) = await world.unsent()
    assert isinstance(board, BoardEntry)
    away_note = {"user_id": away.user_id, "name": away.first_name}
    assert board.notes == (Notice("auto_flipped", away_note),)
    assert board.board.operations, "the flip itself"
    async with session_factory() as session:  # as a restart would read it
        stored = await session.get(OutboxMessage, board.id)
    assert stored is not None
    assert stored.payload["notes"] == [note.to_json() for note in board.notes]


async def test_saved_settings_are_announced_from_the_outbox(session_factory: Sessions) -> None:
    world = World(session_factory, Clock())
    await world.settings.change(
        PLACE, ANN, "tie_window", "150", is_admin=known_admin(True), announce_to=55
    )
    (saved,) = await world.unsent()
    assert isinstance(saved, NoticeEntry)
    assert saved.notice.kind == "settings_saved"
    assert saved.notice.args["settings"]["tie_window_ms"] == 150
    assert saved.reply_to == 55


async def test_a_redelivered_settings_command_says_saved_once(session_factory: Sessions) -> None:
    world = World(session_factory, Clock())
    command = receipt()

    async def change() -> None:
        await world.settings.change(
            PLACE,
            ANN,
            "tie_window",
            "150",
            is_admin=known_admin(True),
            receipt=command,
            announce_to=55,
        )

    world.units.lose_next = True  # lost with its change: the update is still to handle
    with pytest.raises(CommitLostError):
        await change()
    assert await world.unsent() == []
    await change()
    with pytest.raises(Refused) as again:  # redelivered after the change committed
        await change()
    assert again.value.reason is Reason.DUPLICATE_UPDATE
    (saved,) = await world.unsent()
    assert isinstance(saved, NoticeEntry)
    assert saved.notice.kind == "settings_saved"


async def test_a_row_of_a_kind_nobody_knows_is_set_aside_and_blocks_nothing(
    session_factory: Sessions,
) -> None:
    world = World(session_factory, Clock())
    async with world.units() as uow:
        await uow.outbox.add(PLACE.chat_id, 0, "postcard", {"to": "you"})
    await world.lobby.open(PLACE, ANN, receipt())
    (opened,) = await world.unsent()
    assert isinstance(opened, LobbyEntry)
    async with session_factory() as session:
        rows = list(await session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)))
    assert [(row.kind, row.state, row.error) for row in rows] == [
        ("postcard", "failed", "unreadable"),
        ("lobby", "pending", None),
    ]
