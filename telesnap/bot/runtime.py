"""Everything the handlers share: services, the outbox, the referee, and how to show things."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes

from ..services.chat_settings import SettingsService
from ..services.lobby import LobbyService
from ..services.play import PlayService
from ..services.types import Place, Receipt
from ..services.views import LobbyView, PlayOutcome, RaceOutcome, TableView
from .callbacks import CallbackSigner
from .digest import BoardEvent, board_events
from .i18n import DEFAULT_LANGUAGE, directed, language_of, translator
from .outbox import Outbox
from .posts import BoardPost, EditPost, TextPost
from .races import RaceReferee
from .receipts import ReceiptBook
from .render import lobby_keyboard, render_lobby
from .tidy import BoardTidier

logger = logging.getLogger(__name__)

RUNTIME_KEY = "telesnap"


@dataclass(eq=False)
class Runtime:
    """The bot's shared state, kept in ``application.bot_data``."""

    bot: Bot
    lobby: LobbyService
    play: PlayService
    settings: SettingsService
    outbox: Outbox
    book: ReceiptBook
    signer: CallbackSigner
    referee: RaceReferee = field(init=False)
    tidier: BoardTidier = field(init=False)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _languages: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.referee = RaceReferee(self.bot, self.play, self.book, self.show_race)
        self.tidier = BoardTidier(self.outbox)

    def language_for(self, place: Place) -> str:
        """The language the chat's messages are written in (as last looked up)."""
        return self._languages.get(place.chat_id, DEFAULT_LANGUAGE)

    async def remember_language(self, place: Place) -> str:
        """Look the chat's language up once, and keep it for :meth:`language_for`."""
        language = self._languages.get(place.chat_id)
        if language is None:
            chosen = (await self.settings.show(place)).language
            language = self._languages[place.chat_id] = language_of(chosen)
        return language

    def forget_language(self, place: Place) -> None:
        """The chat's language may have changed: look it up again next time."""
        self._languages.pop(place.chat_id, None)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run a coroutine in the background, keeping a reference until it ends."""
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- showing things -----------------------------------------------------------------

    def show_play(self, place: Place, outcome: PlayOutcome, note: str | None = None) -> None:
        """Post what happened and the table (merged into a waiting board of the game).

        ``note`` is a line shown before the events (why a timer acted, say).
        """
        tr = translator(self.language_for(place))
        events = [] if note is None else [BoardEvent(note)]
        events += board_events(outcome.operations, outcome.table, tr)
        self.outbox.submit(
            place.chat_id,
            BoardPost(
                place.chat_id,
                place.thread_id,
                events,
                outcome.table,
                self.signer,
                tr,
                on_shown=self._board_shown(place),
            ),
        )

    async def show_race(self, place: Place, outcome: RaceOutcome) -> None:
        """Show the table after a decided race."""
        self.show_play(place, outcome.play)

    def _board_shown(self, place: Place) -> Any:
        async def shown(table: TableView, message_id: int) -> None:
            receipt = Receipt(time.monotonic_ns(), datetime.now(UTC))
            self.play.record_board_shown(table.game_id, table.board_version, message_id, receipt)
            self.tidier.board_shown(place.chat_id, table.game_id, message_id, is_over=table.is_over)

        return shown

    def say(
        self,
        place: Place,
        text: str,
        reply_to: int | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> None:
        """Post a message in the topic (set right to left in a right-to-left language)."""
        text = directed(text, translator(self.language_for(place)))
        post = TextPost(place.chat_id, place.thread_id, text, reply_markup, reply_to=reply_to)
        self.outbox.submit(place.chat_id, post)

    def edit(
        self,
        place: Place,
        message_id: int,
        text: str,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> None:
        """Give a message new text (set right to left in a right-to-left language)."""
        text = directed(text, translator(self.language_for(place)))
        self.outbox.submit(place.chat_id, EditPost(place.chat_id, message_id, text, reply_markup))

    def show_lobby(self, place: Place, lobby: LobbyView) -> None:
        """Edit the lobby message, or post a new one (and remember it) when there is none."""
        tr = translator(self.language_for(place))
        text = render_lobby(lobby, tr)
        keyboard = lobby_keyboard(lobby, self.signer, tr)
        if lobby.message_id is not None:
            self.edit(place, lobby.message_id, text, keyboard)
            return
        future = self.outbox.submit(
            place.chat_id, TextPost(place.chat_id, place.thread_id, text, keyboard)
        )
        self.spawn(self._remember_lobby(place, lobby.game_id, future))

    async def _remember_lobby(
        self, place: Place, game_id: int, future: asyncio.Future[Any]
    ) -> None:
        try:
            message = await future
        except TelegramError:
            return
        await self.lobby.set_lobby_message(place, game_id, message.message_id)

    async def close(self) -> None:
        """Stop the referee, let the outbox send what it holds (briefly), then stop."""
        await self.referee.close()
        try:
            async with asyncio.timeout(5.0):
                await self.outbox.flush()
        except TimeoutError:
            logger.warning("stopping with messages unsent; the tables are posted again at start")
        await self.outbox.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def runtime_of(context: ContextTypes.DEFAULT_TYPE) -> Runtime:
    """The runtime stored in the application."""
    runtime = context.bot_data[RUNTIME_KEY]
    assert isinstance(runtime, Runtime)
    return runtime


def install(application: Application[Any, Any, Any, Any, Any, Any], runtime: Runtime) -> None:
    """Store the runtime in the application."""
    application.bot_data[RUNTIME_KEY] = runtime
