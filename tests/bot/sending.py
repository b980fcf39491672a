"""The services and the chats' senders wired as ``telesnap.app`` wires them, over a fake Bot API."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram.error import BadRequest

from telesnap.bot.delivery.live import RecentLines
from telesnap.bot.delivery.pace import FloodLimits, Pacer
from telesnap.bot.delivery.sender import Senders
from telesnap.bot.delivery.show import HeadShow
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.coordination import LocalCoordination
from telesnap.services.chat_settings import ChatLanguages, SettingsService
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place
from telesnap.services.views import PlayOutcome
from telesnap.storage.models import OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from ..admin import known_admin
from ..services.test_play_flow import ANN, BOB, PLACE, receipt

Sessions = async_sessionmaker[AsyncSession]
GUARD_S = 10.0
"""A failure guard: how long a test waits for the senders to settle."""


@dataclass
class Call:
    """One Bot API call the fake took: its method, chat, text (if any) and message."""

    method: str
    chat_id: int
    text: str = ""
    message_id: int | None = None
    buttons: bool = False
    thread_id: int | None = None


@dataclass
class FakeBotApi:
    """Takes every call and records it; ``errors`` are raised, in turn, by the calls asked."""

    calls: list[Call] = field(default_factory=list)
    errors: list[tuple[str, BaseException]] = field(default_factory=list)
    """(method, error): the next call of that method raises the error instead."""
    next_id: int = 100
    held: asyncio.Event | None = None
    """While set to an unset event, every call waits for it (a slow Bot API)."""
    recorded: asyncio.Event = field(default_factory=asyncio.Event)
    """Set each time a call is recorded (a test clears it and waits for the next)."""
    waiting: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a call waits for ``held``."""

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        self.recorded.set()

    async def _fail(self, method: str) -> None:
        if self.held is not None:
            self.waiting.set()
            await self.held.wait()
        for index, (failing, error) in enumerate(self.errors):
            if failing == method:
                del self.errors[index]
                raise error

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Any:
        await self._fail("send_message")
        self.next_id += 1
        markup = kwargs.get("reply_markup")
        self._record(
            Call(
                "send_message",
                chat_id,
                text,
                self.next_id,
                markup is not None,
                kwargs.get("message_thread_id"),
            )
        )
        return SimpleNamespace(message_id=self.next_id)

    async def send_message_returning_id(
        self, chat_id: int, text: str, *, reply_markup: Any, message_thread_id: int | None
    ) -> int:
        """A board, as the application's bot sends it (recorded as the message it is)."""
        sent = await self.send_message(
            chat_id, text, reply_markup=reply_markup, message_thread_id=message_thread_id
        )
        return int(sent.message_id)

    async def edit_message_text(
        self, text: str, *, chat_id: int, message_id: int, **kwargs: Any
    ) -> Any:
        await self._fail("edit_message_text")
        if self.text_of(message_id) == text:
            raise BadRequest("Bad Request: message is not modified")
        markup = kwargs.get("reply_markup")
        self._record(Call("edit_message_text", chat_id, text, message_id, markup is not None))
        return True

    def text_of(self, message_id: int) -> str | None:
        """The text the message shows now (None: never sent)."""
        texts = [c.text for c in self.calls if c.message_id == message_id and c.text]
        return texts[-1] if texts else None

    async def edit_message_reply_markup(self, *, chat_id: int, message_id: int, **_: Any) -> Any:
        await self._fail("edit_message_reply_markup")
        self._record(Call("edit_message_reply_markup", chat_id, "", message_id))
        return True

    async def remove_inline_keyboard(self, chat_id: int, message_id: int) -> None:
        """The application's bot's way to bare a board (an ``editMessageReplyMarkup``)."""
        await self.edit_message_reply_markup(chat_id=chat_id, message_id=message_id)

    def boards(self) -> list[Call]:
        return [call for call in self.calls if "face-down" in call.text]

    def bared(self) -> list[int]:
        return [c.message_id or 0 for c in self.calls if c.method == "edit_message_reply_markup"]


async def no_wait(seconds: float) -> None:
    """A retry's wait that returns at once (the tests do not wait out real delays)."""
    await asyncio.sleep(0)


@dataclass
class Wired:
    """The services and the senders of one process, over ``bot``."""

    sessions: Sessions
    bot: FakeBotApi
    limits: FloodLimits = field(default_factory=lambda: FloodLimits(enabled=False))
    pacer: Pacer | None = None
    """The flood-limit pacer (default: one of ``limits`` on the real clock)."""
    store: GameStore = field(init=False)
    outbox: OutboxService = field(init=False)
    senders: Senders = field(init=False)
    lobby: LobbyService = field(init=False)
    play: PlayService = field(init=False)
    settings: SettingsService = field(init=False)
    removed: list[int] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        units = UnitsOfWork(self.sessions)
        self.store = GameStore()
        record_boards(self.store)
        self.outbox = OutboxService(units, watch=units.outbox_watch, keep_lines=True)
        languages = ChatLanguages(units)
        self.settings = SettingsService(units, self.store, languages)
        self.lobby = LobbyService(units, self.store, shuffle_seed=3, languages=languages)
        self.play = PlayService(units, self.store)
        coordination = LocalCoordination()
        signer = CallbackSigner.for_token("1:x")
        show = HeadShow(self.bot, self.outbox, signer, RecentLines(self.outbox.boards_shown))  # type: ignore[arg-type]

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            await asyncio.sleep(0)

        self.senders = Senders(
            self.bot,  # type: ignore[arg-type]
            self.outbox,
            coordination,
            self.pacer or Pacer(self.limits, coordination),
            languages,
            show,
            on_forbidden=self.removed.append,
            sleep=sleep,
        )

    async def settle(self) -> None:
        """Wait until every chat has sent what it holds."""
        assert await self.senders.flush(GUARD_S), "the senders did not settle"

    async def opened(self, place: Place = PLACE) -> None:
        """Ann opens a lobby in ``place``."""
        await self.lobby.open(place, ANN, receipt())

    async def started(self, place: Place = PLACE, *, opened: bool = False) -> PlayOutcome:
        """Ann opens a lobby in ``place`` (unless ``opened``), Bob joins, Ann starts."""
        if not opened:
            await self.opened(place)
        await self.lobby.join(place, BOB, receipt())
        started = await self.lobby.start(place, ANN, is_admin=known_admin(False), receipt=receipt())
        return started.play

    async def flip(self, table: PlayOutcome, place: Place = PLACE) -> PlayOutcome:
        """The player on turn flips."""
        turn = table.table.turn_player
        assert turn is not None
        return await self.play.flip(place, Actor(turn.user_id, turn.name), receipt())

    async def write_again(self, row: OutboxMessage) -> None:
        """Write ``row``'s copy as a new row (as another process would), and wake its chat."""
        copy = OutboxMessage(
            chat_id=row.chat_id,
            thread_id=row.thread_id,
            kind=row.kind,
            game_id=row.game_id,
            board_version=row.board_version,
            payload=row.payload,
        )
        async with self.sessions() as session, session.begin():
            session.add(copy)
        self.outbox.forget(row.chat_id)  # written behind this process's back: read it
        self.senders.wake(row.chat_id)

    async def rows(self, kind: str | None = None) -> list[OutboxMessage]:
        """The outbox rows, in order (of ``kind``, if given)."""
        statement = select(OutboxMessage).order_by(OutboxMessage.id)
        if kind is not None:
            statement = statement.where(OutboxMessage.kind == kind)
        async with self.sessions() as session:
            return list(await session.scalars(statement))

    async def close(self) -> None:
        await self.senders.close()
