"""A reaction time is the press's receipt minus the moment the reply showing its board came.

One clock, moved by hand (no sleeping): each request of the bot takes 80 ms to be
answered, every transaction waits 200 ms for the database (storing that a board
was shown among them), and the call arrives 250 ms after the reply that showed
its board. The call must measure 250 ms: not 330 (timed from the request) nor 50
(timed from when the showing was stored).

The board goes the way every board goes: the change commits its row, the chat's
sender reads it, shows it (:class:`~telesnap.bot.delivery.show.HeadShow`) and has the
outbox mark it sent with the board's moment.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Chat, Message

from telesnap.bot.delivery.live import RecentLines
from telesnap.bot.delivery.pace import FloodLimits, Pacer
from telesnap.bot.delivery.sender import Senders
from telesnap.bot.delivery.show import HeadShow
from telesnap.coordination import LocalCoordination
from telesnap.game import CallKind, CallVerdict
from telesnap.services.chat_settings import ChatLanguages
from telesnap.services.outbox.board_views import ShownBoards
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Receipt
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..services.test_refusals import BOB, PLACE, SHOWN, board_with_a_match, started
from .runtimes import SIGNER

REPLY_MS = 80
STORE_WAIT_MS = 200
REACTION_MS = 250


class HandClock:
    """The wall clock of the test: it moves only when told to."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += timedelta(milliseconds=ms)


class SlowUnits:
    """Units of work that wait ``STORE_WAIT_MS`` (on the hand clock) for the database."""

    def __init__(self, units: UnitsOfWork, clock: HandClock) -> None:
        self._units = units
        self._clock = clock

    def __call__(self, *, read_only: bool = False) -> UnitOfWork:
        self._clock.advance(STORE_WAIT_MS)
        return self._units(read_only=read_only)


class TelegramTakingItsTime:
    """A Bot API that answers every request ``REPLY_MS`` after it was asked.

    It sends boards as the application's bot does (``send_message_returning_id``).
    """

    def __init__(self, clock: HandClock) -> None:
        self._clock = clock
        self._ids = itertools.count(77)
        self.boards_answered: list[datetime] = []
        """When Telegram answered each board's message."""

    def _answer(self) -> int:
        self._clock.advance(REPLY_MS)
        return next(self._ids)

    async def send_message_returning_id(
        self, chat_id: int, text: str, *, reply_markup: Any, message_thread_id: int | None
    ) -> int:
        message_id = self._answer()
        self.boards_answered.append(self._clock.now)
        return message_id

    async def remove_inline_keyboard(self, chat_id: int, message_id: int) -> None:
        self._answer()

    async def send_message(self, chat_id: int, text: str, **_: Any) -> Message:
        return Message(self._answer(), self._clock.now, Chat(chat_id, Chat.GROUP), text=text)

    async def edit_message_text(self, text: str, **_: Any) -> bool:
        self._answer()
        return True


async def test_a_known_delay_after_the_reply_is_measured_as_that_delay(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    store = GameStore()
    record_boards(store)  # as the app wires it: each change that shows a board writes its row
    play = await started(session_factory, store)
    table = await board_with_a_match(play)
    clock = HandClock(SHOWN)
    units = UnitsOfWork(session_factory)
    slow = SlowUnits(units, clock)
    outbox = OutboxService(slow, clock, watch=units.outbox_watch, keep_lines=True)
    bot = TelegramTakingItsTime(clock)
    coordination = LocalCoordination()
    senders = Senders(
        bot,  # type: ignore[arg-type]
        outbox,
        coordination,
        Pacer(FloodLimits(enabled=False), coordination),
        ChatLanguages(slow),
        HeadShow(bot, outbox, SIGNER, RecentLines(outbox.boards_shown), clock),  # type: ignore[arg-type]
    )
    senders.wake(PLACE.chat_id)  # the rows were committed before this sender was there
    assert await senders.flush()
    await senders.close()
    assert bot.boards_answered, "the boards are out"
    replied = bot.boards_answered[-1]  # the message that shows the newest board
    assert clock.now >= replied + timedelta(milliseconds=STORE_WAIT_MS), "storing it waited"
    async with UnitOfWork(session_factory, read_only=True) as uow:
        pending = await uow.outbox.pending(PLACE.chat_id)
        shown_at = await ShownBoards().shown_at(uow, table.game_id, table.board_version)
    assert pending == []
    assert shown_at == replied

    pressed = replied + timedelta(milliseconds=REACTION_MS)
    receipt = Receipt(int(pressed.timestamp() * 1e9), pressed, update_id=9001)
    called = await play.call(PLACE, BOB, CallKind.SNAP, receipt, table.board_version)
    assert called.verdict is CallVerdict.PENDING
    assert called.reaction_ms == REACTION_MS
