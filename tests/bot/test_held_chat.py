"""A worker that holds a chat's lease sends every row of the chat, not only its own game's.

While a worker holds a chat, the others leave the chat's rows to it (their posts
find the chat taken and send nothing). So a board post of one game that finds
nothing of its game left to show (an earlier post took its rows), while another
game of the chat (in another forum topic) has a board waiting, must queue that
board: else it waits until the lease lapses (30 s), or for ever while the holder
keeps reading the chat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

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
from telesnap.services.types import Actor, Place
from telesnap.services.views import PlayOutcome
from telesnap.storage.uow import UnitsOfWork

from ..services.test_play_flow import ANN, BOB, receipt
from .test_durable_boards import TakesEverything

Sessions = async_sessionmaker[AsyncSession]

FORUM = -1001
TOPICS = (
    Place(FORUM, 11, "supergroup", "Club", True),
    Place(FORUM, 22, "supergroup", "Club", True),
)


class NoTidying:
    def board_shown(self, *args: Any, **kwargs: Any) -> None:
        pass


async def _flip(play: PlayService, place: Place, shown: PlayOutcome) -> tuple[PlayOutcome, str]:
    """The player whose turn it is flips; the outcome, and who flipped."""
    turn = shown.table.turn_player
    assert turn is not None
    return await play.flip(place, Actor(turn.user_id, turn.name), receipt()), turn.name


@dataclass
class Worker:
    """One worker's outbox path to a fake Bot API, with two games running in two topics."""

    play: PlayService
    boards: OutboxService
    presenter: Presenter
    outbox: Outbox
    courier: Courier
    bot: TakesEverything
    started: list[PlayOutcome]

    async def settle(self) -> None:
        await self.outbox.flush()
        await self.courier.settle()


async def _two_topics(session_factory: Sessions) -> Worker:
    store = GameStore()
    units = UnitsOfWork(session_factory)
    boards = OutboxService(units, owner="this-worker")
    record_boards(store)
    lobby = LobbyService(units, store, shuffle_seed=3)
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
    worker = Worker(PlayService(units, store), boards, presenter, outbox, courier, bot, [])
    for place in TOPICS:
        await lobby.open(place, ANN, receipt())
        await lobby.join(place, BOB, receipt())
        started = await lobby.start(place, ANN, is_admin=False, receipt=receipt())
        worker.started.append(started.play)
        presenter.show_notices(place)
        presenter.show_play(place, started.play)
        await worker.settle()
    return worker


async def test_a_board_post_with_nothing_of_its_game_left_sends_the_other_topics_board(
    session_factory: Sessions,
) -> None:
    worker = await _two_topics(session_factory)
    first, second = TOPICS
    flipped_first, _ = await _flip(worker.play, first, worker.started[0])
    worker.presenter.show_play(first, flipped_first)
    await worker.settle()
    # Another worker commits a flip in the second topic; its post will find the chat
    # held by this worker and leave the board to it.
    _, flipper = await _flip(worker.play, second, worker.started[1])
    before = len(worker.bot.texts)
    # A second post of the first game (queued behind the one that took its rows).
    worker.presenter.show_play(first, flipped_first)
    await worker.settle()
    await worker.outbox.close()

    sent = worker.bot.texts[before:]
    assert any(f"<b>{flipper}</b> flips" in text for text in sent), (
        "the second topic's flip waits behind a chat this worker holds and does not go"
    )
    assert await worker.boards.pending(FORUM) == [], "nothing is left unsent"


async def test_a_line_post_with_nothing_in_its_topic_sends_the_other_topics_board(
    session_factory: Sessions,
) -> None:
    worker = await _two_topics(session_factory)
    first, second = TOPICS
    _, flipper = await _flip(worker.play, second, worker.started[1])  # another worker's
    before = len(worker.bot.texts)
    worker.presenter.show_notices(first)  # its notice went out with an earlier post
    await worker.settle()
    await worker.outbox.close()

    sent = worker.bot.texts[before:]
    assert any(f"<b>{flipper}</b> flips" in text for text in sent), (
        "the second topic's flip waits behind a chat this worker holds and does not go"
    )
    assert await worker.boards.pending(FORUM) == [], "nothing is left unsent"
