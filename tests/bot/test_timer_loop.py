"""The timer loop stops when asked, and what its timers show reaches each chat on its own."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram.error import BadRequest

from telesnap.services.chat_settings import ChatLanguages, SettingsService
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.services.timers.loop import TimerLoop
from telesnap.services.timers.planner import TimerKind, TimerPlanner
from telesnap.services.timers.service import TimerService
from telesnap.services.types import Actor, Place, Receipt
from telesnap.storage.models import OutboxMessage, OutboxState
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from .runtimes import ChatBot, wired_runtime

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


class IdleTimers:
    """A timer service with nothing due; says when the loop has gone to sleep."""

    def __init__(self) -> None:
        self.asleep = asyncio.Event()

    def now(self) -> datetime:
        return NOW

    async def fire_due(self) -> list[Any]:
        return []

    async def next_due_at(self) -> datetime | None:
        self.asleep.set()
        return None


@pytest.mark.parametrize("yields", [0, 1, 2, 3])
async def test_stop_wins_over_a_wake_up_that_comes_at_the_same_moment(yields: int) -> None:
    timers = IdleTimers()
    loop = TimerLoop(timers)  # type: ignore[arg-type]
    loop.start()
    await timers.asleep.wait()
    loop.wake(NOW + timedelta(seconds=1))  # a timer due before the next look wakes it
    for _ in range(yields):
        await asyncio.sleep(0)  # let the wake-up travel part of the way
    async with asyncio.timeout(10):
        await loop.stop()


class Clock:
    """The timers' (and the outbox's) clock, moved by hand."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


BROKEN = Place(-1, chat_type="group", title="Broken")
"""A chat where Telegram refuses every message (a 400)."""
FINE = Place(-2, chat_type="group", title="Fine")
ANN = Actor(1, "Ann")
LOBBY_CLOSED = "⌛ Nobody started the game, so the lobby is closed."
_update_ids = itertools.count(800)


async def test_each_chat_sees_what_its_timer_did_whatever_another_chat_fails(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """The loop only fires the timers: each writes what it shows to the outbox, and the
    commit wakes the chat's sender. A chat Telegram refuses does not hide another's."""
    clock = Clock()
    units = UnitsOfWork(session_factory)
    store = GameStore(TimerPlanner(clock))
    languages = ChatLanguages(units)
    outbox = OutboxService(units, clock, watch=units.outbox_watch, keep_lines=True)
    refused = BadRequest("Bad Request: not enough rights to send text messages to the chat")
    bot = ChatBot(refuse={BROKEN.chat_id: refused})
    runtime = wired_runtime(
        bot=bot, outbox=outbox, settings=SettingsService(units, store, languages)
    )
    lobby = LobbyService(units, store, languages=languages)
    for place in (BROKEN, FINE):
        await lobby.open(place, ANN, Receipt(0, clock(), next(_update_ids)))
    await runtime.settle()
    assert len(bot.texts(FINE.chat_id)) == 1, "the lobby"

    clock.now += timedelta(hours=2)  # no one started either game
    loop = TimerLoop(TimerService(units, store))
    outcomes = await loop.run_once()
    assert {(o.kind, o.place.chat_id) for o in outcomes} == {
        (TimerKind.LOBBY_EXPIRY, BROKEN.chat_id),
        (TimerKind.LOBBY_EXPIRY, FINE.chat_id),
    }
    await runtime.settle()
    assert bot.texts(FINE.chat_id)[1:] == [LOBBY_CLOSED]
    assert [chat for chat, _message, _text in bot.edits] == [FINE.chat_id], "its lobby closed"
    async with UnitOfWork(session_factory, read_only=True) as uow:
        states = await uow.session.execute(
            select(OutboxMessage.chat_id, OutboxMessage.state).order_by(OutboxMessage.id)
        )
    by_chat = {chat_id: set[str]() for chat_id in (BROKEN.chat_id, FINE.chat_id)}
    for chat_id, state in states:
        by_chat[chat_id].add(state)
    assert by_chat == {
        BROKEN.chat_id: {OutboxState.FAILED.value},  # set aside, logged with the chat
        FINE.chat_id: {OutboxState.SENT.value},
    }
    assert not runtime.senders.is_closed(BROKEN.chat_id), "a 400 is not a removal"
    await runtime.close()


class DueTimers(IdleTimers):
    """Timers whose firing fails: the database is unavailable."""

    async def fire_due(self) -> list[Any]:
        raise ConnectionError("the database is unavailable")


class CountingHousekeeping:
    def __init__(self) -> None:
        self.rounds = 0

    async def tidy_if_due(self, now: datetime) -> None:
        self.rounds += 1


async def test_tidying_still_runs_when_no_timer_can_be_fired() -> None:
    housekeeping = CountingHousekeeping()
    loop = TimerLoop(DueTimers(), housekeeping)  # type: ignore[arg-type]
    with pytest.raises(ConnectionError):
        await loop.run_once()
    assert housekeeping.rounds == 1
