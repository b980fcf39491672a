"""Lobbies and notices through the real outbox: one lobby message per game, rows in order."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram.error import BadRequest

from telesnap.bot.delivery.courier import Courier
from telesnap.bot.delivery.pace import FloodLimits, Outbox
from telesnap.bot.delivery.presenter import Presenter
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.services.chat_settings import SettingsService
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.rows import Notice, record_notice
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.storage.models import Game, OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from ..services.test_play_flow import ANN, BOB, CID, PLACE, receipt

Sessions = async_sessionmaker[AsyncSession]


class RecordingBot:
    """A Bot API that records what is posted and edited; an identical edit is refused."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.edits: list[tuple[int, str]] = []
        self.texts: dict[int, str] = {}

    async def send_message(self, chat_id: int, text: str, **_: Any) -> Any:
        self.sent.append(text)
        message_id = 100 + len(self.sent)
        self.texts[message_id] = text
        return SimpleNamespace(message_id=message_id)

    async def edit_message_text(self, text: str, *, message_id: int, **_: Any) -> Any:
        if self.texts.get(message_id) == text:
            raise BadRequest("Bad Request: message is not modified")
        self.edits.append((message_id, text))
        self.texts[message_id] = text
        return True


class NoTidying:
    def board_shown(self, *args: Any, **kwargs: Any) -> None:
        pass


class World:
    def __init__(self, sessions: Sessions) -> None:
        store = GameStore()
        self.sessions = sessions
        self.units = UnitsOfWork(sessions)
        self.outbox_rows = OutboxService(self.units)
        record_boards(store)
        self.lobby = LobbyService(self.units, store, shuffle_seed=3)
        self.bot = RecordingBot()
        self.lanes = Outbox(self.bot, FloodLimits(enabled=False), time.monotonic)  # type: ignore[arg-type]
        self.courier = Courier(self.lanes)
        self.presenter = Presenter(
            self.courier,
            CallbackSigner.for_token("1:x"),
            SettingsService(self.units, store),
            self.outbox_rows,
            NoTidying(),  # type: ignore[arg-type]
        )

    async def shown(self) -> None:
        """Queue what the chat has unsent, and wait until it is out."""
        self.presenter.show_notices(PLACE)
        await self.settled()

    async def settled(self) -> None:
        for _ in range(3):  # what a settled post queues after it
            await self.lanes.flush()
            await self.courier.settle()

    async def rows(self) -> list[tuple[str, str]]:
        async with self.sessions() as session:
            rows = await session.scalars(select(OutboxMessage).order_by(OutboxMessage.id))
            return [(row.kind, row.state) for row in rows]


async def test_lobby_changes_made_while_it_waits_go_in_one_message_then_edit_it(
    session_factory: Sessions,
) -> None:
    world = World(session_factory)
    opened = await world.lobby.open(PLACE, ANN, receipt())
    await world.lobby.join(PLACE, BOB, receipt())
    await world.shown()
    assert len(world.bot.sent) == 1, "one lobby message"
    assert "Bob" in world.bot.sent[0], "it shows the newest lobby"
    async with world.sessions() as session:
        game = await session.get(Game, opened.lobby.game_id)
        assert game is not None
        assert game.lobby_message_id == 101, "stored with the rows it settled"
    await world.lobby.join(PLACE, CID, receipt())
    await world.shown()
    assert len(world.bot.sent) == 1, "not posted again"
    assert [(message_id, "Cid" in text) for message_id, text in world.bot.edits] == [(101, True)]
    assert await world.rows() == [("lobby", "sent")] * 3
    await world.lobby.leave(PLACE, CID, receipt())
    await world.lobby.join(PLACE, CID, receipt())  # back to what the message shows
    await world.shown()
    assert len(world.bot.edits) == 1, "merged, the two changes edit nothing"
    assert await world.rows() == [("lobby", "sent")] * 5, "'not modified' counts as sent"


async def test_a_notice_of_an_unknown_kind_is_set_aside_and_the_next_one_goes_out(
    session_factory: Sessions,
) -> None:
    world = World(session_factory)
    async with world.units() as uow:
        await record_notice(uow, PLACE, Notice("a_newer_kind", {"x": 1}))
        await record_notice(uow, PLACE, Notice("called_off"))
    await world.shown()
    assert world.bot.sent == ["The game was called off."]
    assert await world.rows() == [("notice", "failed"), ("notice", "sent")]
