"""How things are shown: boards, lobbies and messages rendered in the chat's language and sent."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from telegram import InlineKeyboardMarkup
from telegram.error import TelegramError

from ..services.chat_settings import SettingsService
from ..services.lobby import LobbyService
from ..services.play import PlayService
from ..services.types import Place, Receipt
from ..services.views import LobbyView, PlayOutcome, RaceOutcome, TableView
from .callbacks import CallbackSigner
from .courier import ChatGoneError, Courier
from .digest import BoardEvent, board_events
from .i18n import DEFAULT_LANGUAGE, directed, language_of, translator
from .posts import BoardPost, EditPost, TextPost
from .render import lobby_keyboard, render_lobby
from .tidy import BoardTidier

logger = logging.getLogger(__name__)

LANGUAGE_CACHE_SIZE = 10_000
"""How many chats' languages are kept; the least recently used is looked up again."""


@dataclass(eq=False)
class _PendingLobby:
    """A lobby message on its way: what it shows, and what it should show once sent."""

    shown: tuple[str, InlineKeyboardMarkup | None]
    wanted: tuple[str, InlineKeyboardMarkup | None]


@dataclass(eq=False)
class Presenter:
    """Renders what the services answer and hands it to the courier, in the chat's language."""

    courier: Courier
    signer: CallbackSigner
    settings: SettingsService
    play: PlayService
    lobby: LobbyService
    tidier: BoardTidier
    _languages: OrderedDict[int, str] = field(default_factory=OrderedDict)
    _pending_lobbies: dict[int, _PendingLobby] = field(default_factory=dict)

    # -- the chat's language --------------------------------------------------------------

    def language_for(self, place: Place) -> str:
        """The language the chat's messages are written in (as last looked up)."""
        return self._languages.get(place.chat_id, DEFAULT_LANGUAGE)

    async def remember_language(self, place: Place) -> str:
        """Look the chat's language up once, and keep it for :meth:`language_for`.

        The languages of the :data:`LANGUAGE_CACHE_SIZE` chats used most lately are kept.
        """
        language = self._languages.get(place.chat_id)
        if language is None:
            return self.use_language(place, (await self.settings.show(place)).language)
        self._languages.move_to_end(place.chat_id)
        return language

    def use_language(self, place: Place, chosen: str | None) -> str:
        """The chat's language is ``chosen`` now (a service said so): keep it; return it."""
        language = self._languages[place.chat_id] = language_of(chosen)
        self._languages.move_to_end(place.chat_id)
        while len(self._languages) > LANGUAGE_CACHE_SIZE:
            self._languages.popitem(last=False)
        return language

    @property
    def language_cache_size(self) -> int:
        """How many chats' languages are kept now."""
        return len(self._languages)

    # -- showing things -------------------------------------------------------------------

    def show_play(self, place: Place, outcome: PlayOutcome, note: str | None = None) -> None:
        """Post what happened and the table (merged into a waiting board of the game).

        ``note`` is a line shown before the events (why a timer acted, say).
        """
        tr = translator(self.language_for(place))
        events = [] if note is None else [BoardEvent(note)]
        events += board_events(outcome.operations, outcome.table, tr)
        self.courier.submit(
            place.chat_id,
            BoardPost(
                place.chat_id,
                place.thread_id,
                events,
                outcome.table,
                self.signer,
                tr,
                on_shown=self.board_shown(place),
            ),
        )

    async def show_race(self, place: Place, outcome: RaceOutcome) -> None:
        """Show the table after a race decided here."""
        if outcome.play is not None:
            self.show_play(place, outcome.play)

    def board_shown(self, place: Place) -> Any:
        """What to do once a board of the topic is on screen: store its message, tidy older ones."""

        async def shown(table: TableView, message_id: int) -> None:
            # Stored beside the chat's outbox lane, which goes on to the next message.
            receipt = Receipt(time.monotonic_ns(), datetime.now(UTC))
            self.courier.spawn(record(table, message_id, receipt))
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
        self.courier.submit(place.chat_id, post)

    def edit(
        self,
        place: Place,
        message_id: int,
        text: str,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> None:
        """Give a message new text (set right to left in a right-to-left language)."""
        text = directed(text, translator(self.language_for(place)))
        self.courier.submit(place.chat_id, EditPost(place.chat_id, message_id, text, reply_markup))

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
        future = self.courier.submit(place.chat_id, post)
        self.courier.spawn(self._remember_lobby(place, lobby.game_id, future))

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
