"""How things are shown: boards, lobbies and messages rendered in the chat's language and sent."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from telegram import InlineKeyboardMarkup
from telegram.error import TelegramError

from ..services.chat_settings import SettingsService
from ..services.lobby import LobbyService
from ..services.outbox import OutboxEntry, OutboxService
from ..services.types import Place
from ..services.views import LobbyView, PlayOutcome, RaceOutcome, TableView
from .callbacks import CallbackSigner
from .courier import ChatGoneError, Courier
from .i18n import DEFAULT_LANGUAGE, directed, language_of, translator
from .posts import BoardPost, EditPost, TextPost
from .render import lobby_keyboard, render_lobby
from .tidy import BoardTidier

logger = logging.getLogger(__name__)

LANGUAGE_CACHE_SIZE = 10_000
"""How many chats' languages are kept; the least recently used is looked up again."""

NOTES_KEPT = 1_000
"""How many notes (why a timer acted) wait for their board at most."""


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
    outbox: OutboxService
    lobby: LobbyService
    tidier: BoardTidier
    _languages: OrderedDict[int, str] = field(default_factory=OrderedDict)
    _pending_lobbies: dict[int, _PendingLobby] = field(default_factory=dict)
    _notes: OrderedDict[tuple[int, tuple[object, ...]], str] = field(default_factory=OrderedDict)
    _sent_unmarked: set[int] = field(default_factory=set)
    """Rows shown whose marking as sent failed: never shown again, marked with the next."""

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
        """Post the game's unsent boards (merged into a waiting board of the game).

        The change's board is in the durable outbox already; this board reads the
        game's unsent rows when its turn comes. An outcome with no operations
        (the table shown again) goes out even when nothing is unsent. ``note`` is
        a line shown before the change's events (why a timer acted, say).
        """
        if note is not None and outcome.operations:
            self._notes[(outcome.table.game_id, outcome.operations)] = note
            while len(self._notes) > NOTES_KEPT:
                self._notes.popitem(last=False)
        self._submit_board(place, outcome.table, standalone=not outcome.operations)

    async def show_race(self, place: Place, outcome: RaceOutcome) -> None:
        """Show the table after a race decided here."""
        if outcome.play is not None:
            self.show_play(place, outcome.play)

    async def show_unsent(self, chat_id: int, skip_games: Collection[int] = ()) -> int:
        """Post the chat's boards committed but never sent (after a restart); how many games.

        The games in ``skip_games`` are left out (their table is shown again, which
        takes their unsent boards in).
        """
        games: dict[int, OutboxEntry] = {}
        for entry in await self.outbox.pending_boards(chat_id) or ():
            if entry.game_id not in skip_games:
                games.setdefault(entry.game_id, entry)
        for entry in games.values():
            place = Place(chat_id=entry.chat_id, thread_id=entry.thread_id)
            await self.remember_language(place)
            self._submit_board(place, entry.board.table, standalone=False)
        return len(games)

    def _submit_board(self, place: Place, table: TableView, *, standalone: bool) -> None:
        if self.courier.is_closed(place.chat_id):
            # Nothing goes there any more: its boards are set aside, not tried for ever.
            self.courier.spawn(self._chat_gone(place))
            return
        post = BoardPost(
            place.chat_id,
            place.thread_id,
            [],
            table,
            self.signer,
            translator(self.language_for(place)),
            on_shown=self.board_shown(place),
            pending=self._pending_boards,
            note_for=self._note_for,
            standalone=standalone,
        )
        future = self.courier.submit(place.chat_id, post)
        if not future.done():
            future.add_done_callback(lambda done: self._board_settled(place, post, done))

    async def _pending_boards(
        self, chat_id: int, game_id: int, after_id: int
    ) -> list[OutboxEntry] | None:
        entries = await self.outbox.pending_boards(chat_id, game_id, after_id)
        if entries is None:
            return None
        return [entry for entry in entries if entry.id not in self._sent_unmarked]

    def _note_for(self, entry: OutboxEntry) -> str | None:
        # Looked up, not taken: a board that is not sent after all leaves it to the next.
        return self._notes.get((entry.game_id, entry.board.operations))

    def _board_settled(self, place: Place, post: BoardPost, done: asyncio.Future[Any]) -> None:
        """A board that failed for good: its rows are marked failed (the outbox logged why)."""
        if done.cancelled() or done.exception() is None or not post.entry_ids:
            return
        error = done.exception()
        self.courier.spawn(self._mark_failed(place, list(post.entry_ids), repr(error)))

    async def _chat_gone(self, place: Place) -> None:
        try:
            await self.outbox.chat_gone(place.chat_id)
        except Exception:
            logger.exception("%s: could not set the boards of a removed chat aside", place)

    async def _mark_failed(self, place: Place, entry_ids: list[int], error: str) -> None:
        try:
            more = await self.outbox.boards_failed(place.chat_id, entry_ids, error)
        except Exception:
            logger.exception("%s: could not mark boards %s as failed", place, entry_ids)
            return
        if more:
            await self.show_unsent(place.chat_id)

    def board_shown(self, place: Place) -> Any:
        """What to do once a board of the topic is on screen: mark it sent, tidy older ones.

        The rows are marked sent (with the message that shows the board) before the
        chat's next board is read, so no board is shown twice. Boards still unsent
        in the chat then (those that did not fit, or another worker's) are queued.
        """

        async def shown(post: BoardPost, message_id: int) -> None:
            table = post.table
            entry_ids = [*self._sent_unmarked, *post.entry_ids]
            more = False
            try:
                more = await self.outbox.boards_sent(
                    place.chat_id, entry_ids, table.game_id, table.board_version, message_id
                )
                self._sent_unmarked.clear()
            except Exception:
                # The board is out: sending it again would not help. Calls on it get no
                # reaction time, and a Flip on it is taken as a press on the newest board.
                self._sent_unmarked.update(post.entry_ids)
                logger.exception(
                    "could not store that message %s shows board %s of game %s in chat %s",
                    message_id,
                    table.board_version,
                    table.game_id,
                    place.chat_id,
                )
            self.tidier.board_shown(place.chat_id, table.game_id, message_id, is_over=table.is_over)
            if more:  # boards that did not fit, or that another worker committed meanwhile
                self.courier.spawn(self.show_unsent(place.chat_id))

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
