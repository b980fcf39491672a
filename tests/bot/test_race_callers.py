"""A caller whose worker died while their race collected still gets the press answered."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import RaceReferee, RaceSweeper
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.texts import verdict_toast
from telesnap.coordination import LocalCoordination, PostgresCoordination, coordination_for
from telesnap.game import CallKind, CallVerdict
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.rows import BoardEntry
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.races import RaceService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Receipt
from telesnap.storage.repositories import StoredUpdate
from telesnap.storage.uow import UnitsOfWork

from ..services.test_play_flow import BOB, PLACE, flip_until_match, started_game
from .test_race_sweeper import SHORT_PERIOD_S
from .test_referee import SIGNER, AnsweringBot

QUERY_ID = "press-of-bob"
UPDATE_ID = 424_242


def press_update(query_id: str, language: str) -> dict[str, Any]:
    """Bob's Snap! press as Telegram sends it (only what the bot reads back)."""
    return {
        "update_id": UPDATE_ID,
        "callback_query": {
            "id": query_id,
            "from": {"id": BOB.user_id, "is_bot": False, "first_name": "Bob",
                     "language_code": language},
            "chat_instance": "1",
            "data": "snap",
        },
    }  # fmt: skip


async def called_on_a_worker_that_died(
    sessions: async_sessionmaker[AsyncSession], *, pressed_s_ago: float = 0.0
) -> int:
    """Bob's press is stored in the inbox and his correct call committed; then its worker died.

    Returns the board version Bob called on.
    """
    _, play = await started_game(sessions)
    version = await flip_until_match(play)
    stamp_ns = time.time_ns() - int(pressed_s_ago * 1e9)
    stored = StoredUpdate(
        UPDATE_ID, PLACE.chat_id, PLACE.thread_id, True, press_update(QUERY_ID, "es"), stamp_ns, "h"
    )
    async with UnitsOfWork(sessions)() as uow:
        await uow.updates.store([stored])
    receipt = Receipt.at(stamp_ns, UPDATE_ID, "h")
    call = await play.call(PLACE, BOB, CallKind.SNAP, receipt, seen_version=version)
    assert call.race_id is not None
    return version


@pytest.fixture
async def coordination(
    engine: AsyncEngine,
) -> AsyncIterator[LocalCoordination | PostgresCoordination]:
    """The surviving worker's coordination (its pledges), as the app starts it."""
    alive = coordination_for(engine)
    await alive.start(lambda: None)
    await alive.joined()  # it has resumed: others may start
    try:
        yield alive
    finally:
        await alive.close()


class BoardsWritten:
    """The boards a worker's changes commit for the chat: what wakes the chat's sender."""

    def __init__(self, outbox: OutboxService) -> None:
        self._outbox = outbox
        self.written = asyncio.Event()
        outbox.on_rows(lambda chat_id: self.written.set())

    async def versions(self) -> list[int]:
        """The board versions the chat's sender has to show."""
        line = await self._outbox.line(PLACE.chat_id)
        return [e.board.table.board_version for e in line.entries if isinstance(e, BoardEntry)]


def surviving_worker(
    sessions: async_sessionmaker[AsyncSession],
    pledges: LocalCoordination | PostgresCoordination,
    bot: AnsweringBot,
) -> tuple[RaceReferee, RaceSweeper, BoardsWritten]:
    units = UnitsOfWork(sessions)
    store = GameStore(shared=True)
    record_boards(store)
    races = RaceService(units, store)
    referee = RaceReferee(bot, races, ReceiptBook(SIGNER), pledges=pledges)  # type: ignore[arg-type]
    boards = BoardsWritten(OutboxService(units, watch=units.outbox_watch))
    return referee, RaceSweeper(referee, races, period_s=SHORT_PERIOD_S), boards


async def test_the_press_of_a_caller_whose_worker_died_is_answered_by_the_worker_deciding(
    session_factory: async_sessionmaker[AsyncSession],
    coordination: LocalCoordination | PostgresCoordination,
) -> None:
    version = await called_on_a_worker_that_died(session_factory)
    bot = AnsweringBot()
    referee, sweeper, boards = surviving_worker(session_factory, coordination, bot)
    sweeper.start()
    try:
        await asyncio.wait_for(bot.answered.wait(), timeout=10)
    finally:
        await sweeper.stop()
        await referee.close()
    assert boards.written.is_set()
    assert await boards.versions() == [version + 1], "the new board goes to the chat"
    won = verdict_toast(CallVerdict.WON, None, translator("es"))
    assert bot.answers == [(QUERY_ID, won)], "in Bob's language, as his own worker would have"


async def test_an_expired_press_is_not_answered(
    session_factory: async_sessionmaker[AsyncSession],
    coordination: LocalCoordination | PostgresCoordination,
    caplog: pytest.LogCaptureFixture,
) -> None:
    version = await called_on_a_worker_that_died(session_factory, pressed_s_ago=20.0)
    bot = AnsweringBot()
    referee, sweeper, boards = surviving_worker(session_factory, coordination, bot)
    sweeper.start()
    try:
        await asyncio.wait_for(boards.written.wait(), timeout=10)  # the race is decided
    finally:
        await sweeper.stop()
        await referee.close()  # waits for the deciding task, answers included
    assert await boards.versions() == [version + 1]
    assert bot.answers == [], "Telegram takes no answer 15 s after the press"
    assert any("too old to answer" in record.getMessage() for record in caplog.records), (
        "a press left unanswered is logged with its user and update"
    )


async def test_a_press_its_live_worker_pledged_is_left_to_it(
    engine: AsyncEngine,
    session_factory: async_sessionmaker[AsyncSession],
    coordination: LocalCoordination | PostgresCoordination,
) -> None:
    if not coordination.shared:
        pytest.skip("one process on SQLite: no other worker can hold a press")
    version = await called_on_a_worker_that_died(session_factory)
    taker = PostgresCoordination(engine)  # the worker that took the call is alive after all
    assert await taker.start(lambda: None) is False, "it joins the worker already running"
    try:
        assert await taker.pledge(QUERY_ID)
        bot = AnsweringBot()
        referee, sweeper, boards = surviving_worker(session_factory, coordination, bot)
        sweeper.start()
        try:
            await asyncio.wait_for(boards.written.wait(), timeout=10)  # the race is decided
        finally:
            await sweeper.stop()
            await referee.close()
        assert await boards.versions() == [version + 1]
        assert bot.answers == [], "its own worker answers it"
    finally:
        await taker.close()
    assert await coordination.pledge(QUERY_ID), "a dead worker's pledge goes with its connection"
