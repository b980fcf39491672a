"""A reaction time is the press's receipt minus the moment the reply showing its board came.

One clock, moved by hand (no sleeping): the board's request takes 80 ms to be
answered, storing its showing waits 200 ms more for the database, and the call
arrives 250 ms after the reply. The call must measure 250 ms: not 330 (timed
from the request) nor 50 (timed from when the showing was stored).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.bot.delivery.direct import BoardPost
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.bot.render.i18n import translator
from telesnap.game import CallKind, CallVerdict
from telesnap.services.outbox.board_views import ShownBoards
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Receipt
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..services.test_refusals import BOB, PLACE, SHOWN, board_with_a_match, started

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
    """A bot whose sendMessage is answered ``REPLY_MS`` after it was asked."""

    def __init__(self, clock: HandClock) -> None:
        self._clock = clock
        self.sent: list[str] = []

    async def send_message_returning_id(
        self, chat_id: int, text: str, *, reply_markup: Any, message_thread_id: int | None
    ) -> int:
        self.sent.append(text)
        self._clock.advance(REPLY_MS)
        return 77

    async def remove_inline_keyboard(self, chat_id: int, message_id: int) -> None:
        self._clock.advance(REPLY_MS)


async def test_a_known_delay_after_the_reply_is_measured_as_that_delay(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    play = await started(session_factory, GameStore())
    table = await board_with_a_match(play)
    clock = HandClock(SHOWN)
    outbox = OutboxService(SlowUnits(UnitsOfWork(session_factory), clock), clock=clock)

    async def board_shown(post: BoardPost, message_id: int) -> None:
        await outbox.boards_sent(
            PLACE.chat_id, [], post.table.game_id, post.table.board_version, message_id
        )

    post = BoardPost(
        PLACE.chat_id,
        0,
        [],
        table,
        CallbackSigner(b"secret"),
        translator("en"),
        on_shown=board_shown,
    )
    bot = TelegramTakingItsTime(clock)
    assert await post.send(bot) == 77  # type: ignore[arg-type]
    assert bot.sent
    replied = SHOWN + timedelta(milliseconds=REPLY_MS)
    assert clock.now == replied + timedelta(milliseconds=STORE_WAIT_MS)
    async with UnitOfWork(session_factory, read_only=True) as uow:
        shown_at = await ShownBoards().shown_at(uow, table.game_id, table.board_version)
    assert shown_at == replied

    pressed = replied + timedelta(milliseconds=REACTION_MS)
    receipt = Receipt(int(pressed.timestamp() * 1e9), pressed, update_id=9001)
    called = await play.call(PLACE, BOB, CallKind.SNAP, receipt, table.board_version)
    assert called.verdict is CallVerdict.PENDING
    assert called.reaction_ms == REACTION_MS
