"""How things are shown: boards, lobbies, notices and messages, in the chat's language.

What a change must show is in the durable outbox already (boards, lobbies,
notices: :mod:`telesnap.services.outbox.rows`); the presenter queues the posts
that read it back when their turn comes (:class:`~.posts.BoardPost`,
:class:`~.line_post.LinePost`) and settles the rows they sent. What no change
produced (a refusal, a read-only command's answer) is said directly (:meth:`Presenter.say`).
"""

from __future__ import annotations

import asyncio
import gettext
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from telegram import InlineKeyboardMarkup

from ...services.chat_settings import SettingsService
from ...services.outbox.rows import Entry, GameBoards, OutboxEntry, game_boards, topic_line
from ...services.outbox.service import OutboxService
from ...services.types import Place
from ...services.views import PlayOutcome, RaceOutcome, TableView
from ...support.bounded import BoundedDict
from ..render.callbacks import CallbackSigner
from ..render.i18n import DEFAULT_LANGUAGE, directed, language_of, translator
from .courier import Courier
from .line_post import LinePost
from .live_board import RecentLines
from .posts import BoardPost, EditPost, TextPost
from .tidy import BoardTidier

logger = logging.getLogger(__name__)

LANGUAGE_CACHE_SIZE = 10_000
"""How many chats' languages are kept; the least recently used is looked up again."""


@dataclass(eq=False)
class Presenter:
    """Renders what the services answer and hands it to the courier, in the chat's language."""

    courier: Courier
    signer: CallbackSigner
    settings: SettingsService
    outbox: OutboxService
    tidier: BoardTidier
    recent: RecentLines = field(init=False)
    """The last lines of each live board, shown again above the next events."""
    _languages: BoundedDict[int, str] = field(
        default_factory=lambda: BoundedDict(LANGUAGE_CACHE_SIZE)
    )
    _sent_unmarked: set[int] = field(default_factory=set)
    """Rows shown whose marking as sent failed: never shown again, marked with the next."""

    def __post_init__(self) -> None:
        self.recent = RecentLines(self._boards_shown)

    async def _boards_shown(self, game_id: int, limit: int) -> Sequence[OutboxEntry]:
        return await self.outbox.boards_shown(game_id, limit)

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
            return self.use_language(place, await self.settings.language(place))
        self._languages.touch(place.chat_id)
        return language

    def use_language(self, place: Place, chosen: str | None) -> str:
        """The chat's language is ``chosen`` now (a service said so): keep it; return it."""
        language = self._languages[place.chat_id] = language_of(chosen)
        return language

    @property
    def language_cache_size(self) -> int:
        """How many chats' languages are kept now."""
        return len(self._languages)

    # -- showing things -------------------------------------------------------------------

    def show_play(self, place: Place, outcome: PlayOutcome) -> None:
        """Post the game's unsent boards (merged into a waiting board of the game).

        The change's board is in the durable outbox already; this board reads the
        game's unsent rows when its turn comes. An outcome with no operations
        (the table shown again) goes out even when nothing is unsent.
        """
        self._submit_board(place, outcome.table, standalone=not outcome.operations)

    async def show_race(self, place: Place, outcome: RaceOutcome) -> None:
        """Show the table after a race decided here."""
        if outcome.play is not None:
            self.show_play(place, outcome.play)

    def show_notices(self, place: Place) -> None:
        """Post the chat's unsent lobbies and notices (a change wrote them), in their order.

        A lobby goes in its game's one lobby message (posted the first time,
        edited after that); a notice is a message of its own.
        """
        if self.courier.is_closed(place.chat_id):
            self.courier.spawn(self._chat_gone(place))
            return
        post = LinePost(
            place.chat_id,
            place.thread_id,
            partial(self._read_topic_line, place.thread_id),
            self.signer,
            self._translations,
            on_shown=self._line_shown,
            on_unreadable=self._line_unreadable,
            board_ahead=self._board_ahead,
        )
        future = self.courier.submit(place.chat_id, post)
        if not future.done():
            future.add_done_callback(lambda done: self._settled(place, post, done))

    async def show_unsent(self, chat_id: int, skip_games: Collection[int] = ()) -> int:
        """Post the chat's rows committed but never sent (after a restart, say); how many posts.

        One post per game's boards and one per topic for its lobbies and notices,
        queued in the order of their first row. The games in ``skip_games`` are left out
        (their table is shown again, which takes their unsent boards in).
        """
        return await self._queue(await self.outbox.pending(chat_id) or (), skip_games)

    async def _queue(self, entries: Sequence[Entry], skip_games: Collection[int] = ()) -> int:
        """Queue the posts that send ``entries`` (see :meth:`show_unsent`); how many posts."""
        games: dict[int, OutboxEntry] = {}
        lines: set[int] = set()
        order: list[Entry] = []
        for entry in entries:
            if isinstance(entry, OutboxEntry):
                if entry.game_id not in skip_games and entry.game_id not in games:
                    games[entry.game_id] = entry
                    order.append(entry)
            elif entry.thread_id not in lines:
                lines.add(entry.thread_id)
                order.append(entry)
        for entry in order:
            place = Place(chat_id=entry.chat_id, thread_id=entry.thread_id)
            await self.remember_language(place)
            if isinstance(entry, OutboxEntry):
                self._submit_board(place, entry.board.table, standalone=False)
            else:
                self.show_notices(place)
        return len(order)

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
            standalone=standalone,
            recent=self.recent,
        )
        future = self.courier.submit(place.chat_id, post)
        if not future.done():
            future.add_done_callback(lambda done: self._settled(place, post, done))

    async def _read_topic_line(
        self, thread_id: int, chat_id: int, after_id: int = 0
    ) -> list[Entry] | None:
        """The chat's unsent rows, for a line post of topic ``thread_id``.

        When the topic has none, the chat's other rows are queued: reading them took
        the chat, and while this worker holds it the others leave its rows to it.
        """
        read = await self.outbox.pending(chat_id, after_id)
        if read is None:
            return None
        entries = [entry for entry in read if entry.id not in self._sent_unmarked]
        if entries and not topic_line(entries, thread_id):
            await self._queue(entries)
        return entries

    async def _pending_boards(self, chat_id: int, game_id: int, after_id: int) -> GameBoards | None:
        """The game's boards that may go now; a lobby or notice ahead of them is queued first.

        A game with no rows left queues the chat's other rows instead: reading them
        took the chat, and while this worker holds it the others leave its rows to it.
        """
        read = await self.outbox.pending_for_board(chat_id, game_id, after_id)
        if read is None:
            return None
        entries = [entry for entry in read[0] if entry.id not in self._sent_unmarked]
        found = game_boards(entries, game_id, read[1])
        if not found.boards:
            own = [e for e in entries if isinstance(e, OutboxEntry) and e.game_id == game_id]
            if not own:
                await self._queue(entries)
                return found
            # What holds the game's boards back (a lobby or notice of its topic) goes first.
            line = topic_line(entries, own[0].thread_id)
            ahead = next((e for e in line if not isinstance(e, OutboxEntry)), None)
            if ahead is not None:
                self.show_notices(Place(chat_id=chat_id, thread_id=ahead.thread_id))
        return found

    def _board_ahead(self, entry: OutboxEntry) -> None:
        """A board is at the head of the line: queue its game's board (it goes first)."""
        place = Place(chat_id=entry.chat_id, thread_id=entry.thread_id)
        self._submit_board(place, entry.board.table, standalone=False)

    def _translations(self, place: Place) -> gettext.NullTranslations:
        return translator(self.language_for(place))

    async def _line_shown(self, post: LinePost, message_id: int) -> None:
        """Mark a line post's rows sent (with the lobby's message); queue what the chat has more."""
        entry_ids = [*self._sent_unmarked, *post.entry_ids]
        try:
            more = await self.outbox.line_sent(
                post.chat_id, entry_ids, message_id, lobby_of=post.lobby_of
            )
            self._sent_unmarked.clear()
        except Exception:
            # The message is out: it must not go again. A lobby edited later without its
            # message id stored posts a new lobby message.
            self._sent_unmarked.update(post.entry_ids)
            raise
        if more:
            self.courier.spawn(self.show_unsent(post.chat_id))

    async def _line_unreadable(self, post: LinePost, error: Exception) -> None:
        await self._mark_failed(Place(chat_id=post.chat_id), list(post.entry_ids), repr(error))

    def _settled(self, place: Place, post: BoardPost | LinePost, done: asyncio.Future[Any]) -> None:
        """A post that failed for good: its rows are marked failed (the outbox logged why)."""
        if done.cancelled() or done.exception() is None or not post.entry_ids:
            return
        error = done.exception()
        self.courier.spawn(self._mark_failed(place, list(post.entry_ids), repr(error)))

    async def _chat_gone(self, place: Place) -> None:
        try:
            await self.outbox.chat_gone(place.chat_id)
        except Exception:
            logger.exception("%s: could not set the rows of a removed chat aside", place)

    async def _mark_failed(self, place: Place, entry_ids: list[int], error: str) -> None:
        try:
            more = await self.outbox.rows_failed(place.chat_id, entry_ids, error)
        except Exception:
            logger.exception("%s: could not mark outbox rows %s as failed", place, entry_ids)
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
            message_before, version_before = post.previous_message, post.previous_version
            previous = None
            if message_before is not None and version_before is not None:
                previous = (message_before, version_before)
            self.tidier.board_shown(
                place.chat_id,
                table.game_id,
                message_id,
                table.board_version,
                is_over=table.is_over,
                previous=previous,
            )
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
