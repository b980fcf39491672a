"""Everything the handlers share: services, the outbox, the referee, and how to show things."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
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
from ..services.races import RaceService
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
LANGUAGE_CACHE_SIZE = 10_000
"""How many chats' languages are kept; the least recently used is looked up again."""
REMOVED_CHATS_KEPT = 10_000
"""How many chats that removed the bot are remembered (so nothing is sent there)."""


@dataclass(eq=False)
class _PendingLobby:
    """A lobby message on its way: what it shows, and what it should show once sent."""

    shown: tuple[str, InlineKeyboardMarkup | None]
    wanted: tuple[str, InlineKeyboardMarkup | None]


@dataclass(eq=False)
class Runtime:
    """The bot's shared state, kept in ``application.bot_data``."""

    bot: Bot
    lobby: LobbyService
    play: PlayService
    races: RaceService
    settings: SettingsService
    outbox: Outbox
    book: ReceiptBook
    signer: CallbackSigner
    referee: RaceReferee = field(init=False)
    tidier: BoardTidier = field(init=False)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _languages: OrderedDict[int, str] = field(default_factory=OrderedDict)
    _pending_lobbies: dict[int, _PendingLobby] = field(default_factory=dict)
    _removed_chats: OrderedDict[int, None] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        self.referee = RaceReferee(self.bot, self.races, self.book, self.show_race)
        self.tidier = BoardTidier(self.outbox)

    def language_for(self, place: Place) -> str:
        """The language the chat's messages are written in (as last looked up)."""
        return self._languages.get(place.chat_id, DEFAULT_LANGUAGE)

    async def remember_language(self, place: Place) -> str:
        """Look the chat's language up once, and keep it for :meth:`language_for`.

        The languages of the :data:`LANGUAGE_CACHE_SIZE` chats used most lately are kept.
        """
        language = self._languages.get(place.chat_id)
        if language is None:
            chosen = (await self.settings.show(place)).language
            language = self._languages[place.chat_id] = language_of(chosen)
            while len(self._languages) > LANGUAGE_CACHE_SIZE:
                self._languages.popitem(last=False)
        else:
            self._languages.move_to_end(place.chat_id)
        return language

    def forget_language(self, place: Place) -> None:
        """The chat's language may have changed: look it up again next time."""
        self._languages.pop(place.chat_id, None)

    @property
    def language_cache_size(self) -> int:
        """How many chats' languages are kept now."""
        return len(self._languages)

    # -- a chat that removed the bot ------------------------------------------------------

    def bot_removed(self, chat_id: int) -> None:
        """The bot was removed from the chat (or is refused there): end its games, post nothing.

        Called for the ``my_chat_member`` update and for a 403 from any send.
        """
        if chat_id in self._removed_chats:
            return
        self._removed_chats[chat_id] = None
        while len(self._removed_chats) > REMOVED_CHATS_KEPT:
            self._removed_chats.popitem(last=False)
        logger.info("chat %s: the bot was removed; ending its games there", chat_id)
        self.spawn(self._end_games_in(chat_id))

    def bot_added(self, chat_id: int) -> None:
        """The bot is a member of the chat again: it may post there."""
        self._removed_chats.pop(chat_id, None)

    def is_removed_from(self, chat_id: int) -> bool:
        """Whether the bot was removed from the chat (nothing is sent there)."""
        return chat_id in self._removed_chats

    async def _end_games_in(self, chat_id: int) -> None:
        try:
            ended = await self.lobby.end_in_removed_chat(chat_id)
        except Exception:
            # Forgotten, so that the next 403 or removal tries again.
            self._removed_chats.pop(chat_id, None)
            logger.exception("chat %s: ending the games after the bot was removed failed", chat_id)
            return
        if ended:
            logger.info("chat %s: ended game(s) %s", chat_id, ", ".join(map(str, ended)))

    def submit(self, chat_id: int, post: Any) -> asyncio.Future[Any]:
        """Queue a post in the chat's lane (nothing goes to a chat that removed the bot).

        A post that fails for good is logged by the outbox; its future's exception
        is taken here so that asyncio does not report it as never retrieved.
        """
        if chat_id in self._removed_chats:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            future.set_exception(ChatGoneError(chat_id))
        else:
            future = self.outbox.submit(chat_id, post)
        future.add_done_callback(_retrieve)
        return future

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run a coroutine in the background, keeping a reference until it ends.

        A background job that fails is logged; it stops nothing else.
        """
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)

    async def settle(self) -> None:
        """Wait until the background work started so far (and what it started) is done."""
        while pending := [task for task in self._tasks if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    # -- showing things -----------------------------------------------------------------

    def show_play(self, place: Place, outcome: PlayOutcome, note: str | None = None) -> None:
        """Post what happened and the table (merged into a waiting board of the game).

        ``note`` is a line shown before the events (why a timer acted, say).
        """
        tr = translator(self.language_for(place))
        events = [] if note is None else [BoardEvent(note)]
        events += board_events(outcome.operations, outcome.table, tr)
        self.submit(
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
        """Show the table after a race decided here."""
        if outcome.play is not None:
            self.show_play(place, outcome.play)

    def _board_shown(self, place: Place) -> Any:
        async def shown(table: TableView, message_id: int) -> None:
            # Stored beside the chat's outbox lane, which goes on to the next message.
            receipt = Receipt(time.monotonic_ns(), datetime.now(UTC))
            self.spawn(record(table, message_id, receipt))
            self.tidier.board_shown(place.chat_id, table.game_id, message_id, is_over=table.is_over)

        async def record(table: TableView, message_id: int, receipt: Receipt) -> None:
            try:
                await self.play.record_board_shown(
                    table.game_id, table.board_version, message_id, receipt
                )
            except Exception:
                # The board is out: sending it again would not help. Calls on it get no
                # reaction time, and a Flip on it is taken as a press on the newest board.
                logger.exception(
                    "could not store that message %s shows board %s of game %s in chat %s",
                    message_id,
                    table.board_version,
                    table.game_id,
                    place.chat_id,
                )

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
        self.submit(place.chat_id, post)

    def edit(
        self,
        place: Place,
        message_id: int,
        text: str,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> None:
        """Give a message new text (set right to left in a right-to-left language)."""
        text = directed(text, translator(self.language_for(place)))
        self.submit(place.chat_id, EditPost(place.chat_id, message_id, text, reply_markup))

    def show_lobby(self, place: Place, lobby: LobbyView) -> None:
        """Edit the lobby message, or post a new one (and remember it) when there is none.

        While the first lobby message is on its way (its id not known yet), later
        changes wait for it and then edit it: one lobby message per game.
        """
        tr = translator(self.language_for(place))
        wanted = (render_lobby(lobby, tr), lobby_keyboard(lobby, self.signer, tr))
        if lobby.message_id is not None:
            self.edit(place, lobby.message_id, *wanted)
            return
        pending = self._pending_lobbies.get(lobby.game_id)
        if pending is not None:
            pending.wanted = wanted
            return
        self._pending_lobbies[lobby.game_id] = _PendingLobby(wanted, wanted)
        post = TextPost(place.chat_id, place.thread_id, *wanted)
        future = self.submit(place.chat_id, post)
        self.spawn(self._remember_lobby(place, lobby.game_id, future))

    async def _remember_lobby(
        self, place: Place, game_id: int, future: asyncio.Future[Any]
    ) -> None:
        try:
            message = await future
            await self.lobby.set_lobby_message(place, game_id, message.message_id)
        except (TelegramError, ChatGoneError):
            return  # the outbox logged why it could not be sent
        except Exception:
            logger.exception("%s, game %s: remembering the lobby message failed", place, game_id)
            return
        finally:
            pending = self._pending_lobbies.pop(game_id, None)
        if pending is not None and pending.wanted != pending.shown:
            self.edit(place, message.message_id, *pending.wanted)

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


class ChatGoneError(Exception):
    """A post for a chat that removed the bot: it was not sent."""

    def __init__(self, chat_id: int) -> None:
        super().__init__(f"chat {chat_id} removed the bot")
        self.chat_id = chat_id


def _log_failure(task: asyncio.Task[Any]) -> None:
    """Log a background job that raised (and take its exception, so it is not reported twice)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("background job %s failed: %r", task.get_coro(), error, exc_info=error)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Take a finished post's exception (the outbox has logged it)."""
    if not future.cancelled():
        future.exception()


def runtime_of(context: ContextTypes.DEFAULT_TYPE) -> Runtime:
    """The runtime stored in the application."""
    runtime = context.bot_data[RUNTIME_KEY]
    assert isinstance(runtime, Runtime)
    return runtime


def install(application: Application[Any, Any, Any, Any, Any, Any], runtime: Runtime) -> None:
    """Store the runtime in the application."""
    application.bot_data[RUNTIME_KEY] = runtime
