"""Two workers, one chat: the worker that holds the chat sends every row of it, whoever wrote it.

A worker that commits a row while another holds the chat's lease leaves the row to
that one, which its commit wakes (a NOTIFY). The holder keeps an idle chat a while,
then gives it up and looks once more; if the holder dies, the rows go to a live worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.bot.delivery.live import RecentLines
from telesnap.bot.delivery.lookout import Lookout
from telesnap.bot.delivery.pace import FloodLimits, Pacer
from telesnap.bot.delivery.sender import Senders
from telesnap.bot.delivery.show import HeadShow
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.coordination import PostgresCoordination
from telesnap.services.chat_settings import ChatLanguages
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place
from telesnap.services.views import PlayOutcome
from telesnap.storage.database import create_engine
from telesnap.storage.database import session_factory as make_session_factory
from telesnap.storage.models import OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from ..admin import known_admin
from ..services.test_play_flow import ANN, BOB, receipt
from .sending import GUARD_S, FakeBotApi

FORUM = -1001
TOPICS = (
    Place(FORUM, 11, "supergroup", "Club", True),
    Place(FORUM, 22, "supergroup", "Club", True),
)


@dataclass
class Worker:
    """One worker process: its services, its senders and its Bot API, on the shared database."""

    coordination: PostgresCoordination
    lobby: LobbyService
    play: PlayService
    senders: Senders
    lookout: Lookout
    bot: FakeBotApi

    async def flip(self, place: Place, shown: PlayOutcome) -> PlayOutcome:
        turn = shown.table.turn_player
        assert turn is not None
        return await self.play.flip(place, Actor(turn.user_id, turn.name), receipt())


async def worker(engine: AsyncEngine, stack: AsyncExitStack) -> Worker:
    units = UnitsOfWork(make_session_factory(engine))
    store = GameStore(shared=True)
    record_boards(store)
    coordination = PostgresCoordination(engine)
    stack.push_async_callback(coordination.close)
    outbox = OutboxService(units, watch=units.outbox_watch)
    bot = FakeBotApi()
    show = HeadShow(bot, outbox, CallbackSigner.for_token("1:x"), RecentLines(outbox.boards_shown))  # type: ignore[arg-type]
    senders = Senders(
        bot,  # type: ignore[arg-type]
        outbox,
        coordination,
        Pacer(FloodLimits(enabled=False), coordination),
        ChatLanguages(units),
        show,
    )
    stack.push_async_callback(senders.close)
    await coordination.start(lambda: None, senders.rows_written)
    await coordination.joined()
    lobby = LobbyService(units, store, shuffle_seed=3)
    lookout = Lookout(senders, outbox, grace=timedelta(0))
    return Worker(coordination, lobby, PlayService(units, store), senders, lookout, bot)


@pytest.fixture
async def two_workers(
    postgres_engine: AsyncEngine, postgres_database_url: str
) -> AsyncIterator[tuple[Worker, Worker]]:
    """Two workers, each with its connections (a wake-up tells them apart by its sender)."""
    async with AsyncExitStack() as stack:
        other = create_engine(postgres_database_url)
        stack.push_async_callback(other.dispose)
        yield await worker(postgres_engine, stack), await worker(other, stack)


async def started(on: Worker, place: Place) -> PlayOutcome:
    await on.lobby.open(place, ANN, receipt())
    await on.lobby.join(place, BOB, receipt())
    return (await on.lobby.start(place, ANN, is_admin=known_admin(False), receipt=receipt())).play


async def unsent(engine: AsyncEngine) -> list[int]:
    async with make_session_factory(engine)() as session:
        statement = select(OutboxMessage.id).where(OutboxMessage.state == "pending")
        return list(await session.scalars(statement))


async def test_a_row_written_while_another_worker_holds_the_chat_is_sent_by_that_worker(
    two_workers: tuple[Worker, Worker], postgres_engine: AsyncEngine
) -> None:
    a, b = two_workers
    table = await started(a, TOPICS[0])
    assert await a.senders.flush(GUARD_S)
    a.bot.held = asyncio.Event()  # a's last row is on its way: a holds the chat meanwhile
    await a.flip(TOPICS[0], table)
    await asyncio.wait_for(_leased(b, FORUM), GUARD_S)
    await started(b, TOPICS[1])  # committed on b while a holds the chat
    assert await b.senders.flush(GUARD_S)
    assert b.bot.calls == [], "b leaves the chat to a"
    a.bot.held.set()
    assert await a.senders.flush(GUARD_S)
    async with asyncio.timeout(GUARD_S):  # the wake-up of b's commit reaches a
        while len(a.bot.boards()) < 3:
            a.bot.recorded.clear()
            await a.bot.recorded.wait()  # a call sent by a's sender: look again
        assert await a.senders.flush(GUARD_S)
    assert [call.thread_id for call in a.bot.boards()][-2:] == [11, 22], "a sent b's board"
    assert await unsent(postgres_engine) == []


async def test_a_worker_gives_up_an_idle_chat_at_its_second_look_and_another_takes_it(
    two_workers: tuple[Worker, Worker], postgres_engine: AsyncEngine
) -> None:
    a, b = two_workers
    await started(a, TOPICS[0])
    assert await a.senders.flush(GUARD_S)
    assert not await b.coordination.try_chat(FORUM), "a keeps the chat a while"
    await a.lookout.look_once()  # the rounds of its look-out, by hand
    assert not await b.coordination.try_chat(FORUM), "idle at one look: still a's"
    await a.lookout.look_once()
    assert await b.coordination.try_chat(FORUM), "idle at two looks: given up"


async def test_the_rows_of_a_worker_that_died_holding_the_chat_go_to_a_live_one(
    two_workers: tuple[Worker, Worker], postgres_engine: AsyncEngine
) -> None:
    a, b = two_workers
    a.bot.held = asyncio.Event()  # a's send never comes back: a is killed mid-send
    await started(a, TOPICS[0])
    await asyncio.wait_for(_leased(b, FORUM), GUARD_S)
    await b.lookout.look_once()
    assert await b.senders.flush(GUARD_S)
    assert b.bot.calls == [], "a live worker holds the chat: b leaves it"
    await a.coordination.close()  # its connection goes, as with kill -9
    await b.lookout.look_once()
    assert await b.senders.flush(GUARD_S)
    assert [call.thread_id for call in b.bot.boards()] == [11], "b took the chat over"
    assert await unsent(postgres_engine) == []


async def _leased(other: Worker, chat_id: int) -> None:
    """Return once ``other`` sees the chat leased by someone else."""
    while await other.coordination.try_chat(chat_id):
        await other.coordination.release_chat(chat_id)
        await asyncio.sleep(0.01)  # polling the lock, under the caller's timeout
