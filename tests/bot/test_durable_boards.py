"""Durable boards through the real outbox: a board refused for good blocks nothing after it."""

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
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor
from telesnap.storage.models import OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from ..services.test_play_flow import ANN, BOB, PLACE, receipt

Sessions = async_sessionmaker[AsyncSession]


class RefusesFirstBoard:
    """A Bot API that refuses the first board for good (a 400) and takes the rest."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.refused = 0

    async def send_message(self, chat_id: int, text: str, **_: Any) -> Any:
        if not self.refused and "face-down" in text:
            self.refused += 1
            raise BadRequest("Bad Request: can't parse entities")
        self.texts.append(text)
        return SimpleNamespace(message_id=100 + len(self.texts))


class NoTidying:
    def board_shown(self, *args: Any, **kwargs: Any) -> None:
        pass


async def test_a_board_refused_for_good_is_set_aside_and_the_next_one_is_sent(
    session_factory: Sessions,
) -> None:
    store = GameStore()
    units = UnitsOfWork(session_factory)
    boards = OutboxService(units)
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    play = PlayService(units, store)
    bot = RefusesFirstBoard()
    outbox = Outbox(bot, FloodLimits(enabled=False), time.monotonic)  # type: ignore[arg-type]
    courier = Courier(outbox)
    presenter = Presenter(
        courier,
        CallbackSigner.for_token("1:x"),
        SettingsService(units, store),
        boards,
        NoTidying(),  # type: ignore[arg-type]
    )
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    started = await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    presenter.show_play(PLACE, started.play)  # refused for good
    await outbox.flush()
    await courier.settle()
    turn = started.play.table.turn_player
    assert turn is not None
    flipped = await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    presenter.show_play(PLACE, flipped)
    await outbox.flush()
    await courier.settle()
    await outbox.close()
    lobby_text, *boards_sent = bot.texts
    assert "the game has started" in lobby_text, "the lobby went ahead of the boards"
    assert len(boards_sent) == 1
    assert f"<b>{turn.name}</b> flips" in boards_sent[0], "the next board goes out"
    assert "face-down" in boards_sent[0]
    async with session_factory() as session:
        rows = list(
            await session.scalars(
                select(OutboxMessage)
                .where(OutboxMessage.kind == "board")
                .order_by(OutboxMessage.id)
            )
        )
    assert [row.state for row in rows] == ["failed", "sent"]
    assert "Can't parse entities" in (rows[0].error or "")
    assert rows[1].message_id == 102


class TakesEverything:
    """A Bot API that takes every message."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def send_message(self, chat_id: int, text: str, **_: Any) -> Any:
        self.texts.append(text)
        return SimpleNamespace(message_id=100 + len(self.texts))


async def test_a_table_shown_again_never_posts_a_board_older_than_the_one_on_screen(
    session_factory: Sessions,
) -> None:
    """After a restart the table read for "I am back" may be older than a board shown since."""
    store = GameStore()
    units = UnitsOfWork(session_factory)
    boards = OutboxService(units)
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
    play = PlayService(units, store)
    bot = TakesEverything()
    outbox = Outbox(bot, FloodLimits(enabled=False), time.monotonic)  # type: ignore[arg-type]
    courier = Courier(outbox)
    presenter = Presenter(
        courier,
        CallbackSigner.for_token("1:x"),
        SettingsService(units, store),
        boards,
        NoTidying(),  # type: ignore[arg-type]
    )
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    started = await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    presenter.show_play(PLACE, started.play)
    await outbox.flush()
    await courier.settle()
    stale = await play.table(PLACE)  # read for the table shown again
    turn = stale.table.turn_player
    assert turn is not None
    flipped = await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    presenter.show_play(PLACE, flipped)  # committed meanwhile, shown first
    await outbox.flush()
    await courier.settle()
    shown = len(bot.texts)
    presenter.show_play(PLACE, stale)
    await outbox.flush()
    await courier.settle()
    await outbox.close()
    assert flipped.table.board_version > stale.table.board_version
    assert len(bot.texts) == shown, "a board older than the one on screen was posted after it"
