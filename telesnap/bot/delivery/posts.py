"""Every kind of post the bot sends through the outbox: boards, texts, edits, files, pictures.

A board is durable: it reads its game's unsent rows of the outbox
(:mod:`telesnap.services.outbox.service`) when its turn to be sent comes, so it shows
every change committed by then, in order, whichever process made it. Lobbies
and notices are durable too (:mod:`.line_post`). A picture
with buttons (the leaderboard) is replaced in one ``editMessageMedia`` call.
"""

from __future__ import annotations

import gettext
import io
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from telegram import Bot, InlineKeyboardMarkup, InputFile, InputMediaPhoto, Message
from telegram.constants import ParseMode

from ...services.outbox.rows import GameBoards
from ...services.views import TableView
from ..render.boards import board_keyboard, compose_board
from ..render.callbacks import CallbackSigner
from ..render.digest import BoardEvent, board_lines, fits_together
from .lanes import Post
from .live_board import LIVE, RecentLines, edit_in_place, entry_events, with_earlier

logger = logging.getLogger(__name__)

BoardShown = Callable[["BoardPost", int], Awaitable[None]]
"""Told which message shows a board once Telegram has accepted it."""

PendingBoards = Callable[[int, int, int], Awaitable[GameBoards | None]]
"""Reads a game's unsent boards: ``(chat_id, game_id, after_id)``, oldest first.

None: another worker sends the chat's boards now (and so these too).
"""


@runtime_checkable
class QuickSender(Protocol):
    """A bot that sends boards and bares them without parsing each reply (see ``StampingBot``)."""

    async def send_message_returning_id(
        self,
        chat_id: int,
        text: str,
        *,
        reply_markup: InlineKeyboardMarkup | None,
        message_thread_id: int | None,
    ) -> int:
        """Send an HTML message; return its message id."""

    async def remove_inline_keyboard(self, chat_id: int, message_id: int) -> None:
        """Take a message's buttons off, without parsing the message Telegram returns."""


@dataclass(eq=False)
class BoardPost:
    """A new message showing a game's table, with the events since the previous one.

    With ``pending`` (the durable outbox), the events and the table come from the
    game's unsent rows, read when the board is about to go out; ``standalone``
    boards (the table shown again, after a restart) go out even with none, and
    the others then have nothing to say and send nothing. ``entry_ids`` are the
    rows a board shows (those that do not fit wait for the next board).
    Without ``pending``, the board shows its own ``events`` and ``table``.

    A game in the live board style (``table.board_style``) edits the message of its
    newest board shown, when there is one (:mod:`.live_board`).
    """

    chat_id: int
    thread_id: int
    events: list[BoardEvent]
    table: TableView
    signer: CallbackSigner
    tr: gettext.NullTranslations
    on_shown: BoardShown | None = None
    pending: PendingBoards | None = None
    standalone: bool = True
    entry_ids: list[int] = field(default_factory=list)
    older_than_shown: bool = False
    """The table shown again is older than a board of the game already shown (sent: none)."""
    recent: RecentLines | None = None
    """The last lines of live boards (with it, a live board shows them above its own)."""
    previous_message: int | None = None
    """The message of the game's newest board shown before (read with the rows): a live
    board edits it; a new board takes its buttons off (see :mod:`.tidy`)."""
    previous_version: int | None = None
    """That board's version."""
    key: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.key = f"board:{self.table.game_id}"

    async def send(self, bot: Bot) -> int | None:
        """Send the board (None: nothing to show); then report the message as shown."""
        if self.pending is not None:
            if not await self._take_pending(self.pending):
                self.entry_ids.clear()
                return None  # another worker sends the chat's boards
            if not self.entry_ids and not self.standalone:
                return None  # an earlier board of the game showed these rows already
            if self.older_than_shown:
                return None  # a newer board of the game is on screen: this table is stale
            if self._live_shows_it:
                return None  # the live board shows this table already (a restart shows it again)
        lines = board_lines(self.events, self.table, self.tr)
        recent = self.recent if self.table.board_style == LIVE else None
        shown = lines
        if recent is not None:
            earlier = await recent.earlier(self.table.game_id, self.previous_version, self.tr)
            shown = with_earlier(earlier, lines)
        text = compose_board(shown, self.table, self.tr)
        keyboard = board_keyboard(self.table, self.signer, self.tr)
        message_id = None
        if recent is not None and self.previous_message is not None:
            message_id = await edit_in_place(
                bot, self.chat_id, self.previous_message, text, keyboard
            )
        if message_id is None:
            message_id = await self._post(bot, text, keyboard)
        if recent is not None:
            recent.shown(
                self.table.game_id,
                shown,
                version=self.table.board_version,
                is_over=self.table.is_over,
            )
        if self.on_shown is not None:
            try:
                await self.on_shown(self, message_id)
            except Exception:
                # The board is out: sending it again would show it twice.
                logger.exception(
                    "chat %s, game %s: noting board %s as shown failed",
                    self.chat_id,
                    self.table.game_id,
                    self.table.board_version,
                )
        return message_id

    @property
    def _live_shows_it(self) -> bool:
        return (
            self.table.board_style == LIVE
            and not self.entry_ids
            and self.previous_message is not None
            and self.previous_version == self.table.board_version
        )

    async def _post(self, bot: Bot, text: str, keyboard: InlineKeyboardMarkup | None) -> int:
        thread = self.thread_id or None
        if isinstance(bot, QuickSender):
            return await bot.send_message_returning_id(
                self.chat_id, text, reply_markup=keyboard, message_thread_id=thread
            )
        message = await bot.send_message(
            self.chat_id,
            text,
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard,
            message_thread_id=thread,
        )
        return message.message_id

    async def _take_pending(self, pending: PendingBoards) -> bool:
        """Add the game's unsent rows (after those taken already) while they fit.

        False: another worker sends the chat's boards.
        """
        after = self.entry_ids[-1] if self.entry_ids else 0
        found = await pending(self.chat_id, self.table.game_id, after)
        if found is None:
            return False
        taken_all = True
        newest_row = None
        for entry in found.boards:
            events = entry_events(entry, self.tr)
            if self.entry_ids and not fits_together(
                [*self.events, *events], entry.board.table, self.tr
            ):
                taken_all = False  # the rest goes in the next board
                break
            self.events.extend(events)
            newest_row = entry.board.table
            self.entry_ids.append(entry.id)
        if newest_row is not None and (
            not self.standalone
            or not taken_all
            or found.held
            or newest_row.board_version >= self.table.board_version
        ):
            # A table shown again goes out with its own table only when no row of its game
            # is left for a later board: that board would show an older table after it.
            self.table = newest_row
        shown = found.newest_shown
        self.previous_message = found.newest_message
        self.previous_version = shown
        self.older_than_shown = (
            not self.entry_ids
            and shown is not None
            and (found.held or self.table.board_version < shown)
        )
        return True

    def absorb(self, newer: Post) -> bool:
        """Take a newer board of the same game: its events are added, its table shown.

        A durable board takes any newer one (the rows are read at send time). A
        board full even when summarised takes no more: the newer one goes out after it.
        """
        if not isinstance(newer, BoardPost):
            return False
        if self.pending is not None:
            if newer.standalone and newer.table.board_version >= self.table.board_version:
                self.table = newer.table
            self.standalone = self.standalone or newer.standalone
            self.tr = newer.tr
            return True
        if not fits_together([*self.events, *newer.events], newer.table, newer.tr):
            return False
        self.events.extend(newer.events)
        self.table = newer.table
        self.tr = newer.tr
        return True


@dataclass(eq=False)
class TextPost:
    """A new HTML message (a reply, an announcement, a lobby)."""

    chat_id: int
    thread_id: int
    text: str
    reply_markup: InlineKeyboardMarkup | None = None
    reply_to: int | None = None
    key: str | None = None

    async def send(self, bot: Bot) -> Message:
        """Send the message."""
        return await bot.send_message(
            self.chat_id,
            self.text,
            parse_mode=ParseMode.HTML,
            reply_markup=self.reply_markup,
            message_thread_id=self.thread_id or None,
            reply_to_message_id=self.reply_to,
            allow_sending_without_reply=True,
        )

    def absorb(self, newer: Post) -> bool:
        """Plain messages never merge."""
        return False


@dataclass(eq=False)
class EditPost:
    """A new text for an existing message; a waiting edit of the same message is replaced."""

    chat_id: int
    message_id: int
    text: str
    reply_markup: InlineKeyboardMarkup | None = None
    key: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.key = f"edit:{self.message_id}"

    async def send(self, bot: Bot) -> Any:
        """Edit the message (an identical edit counts as done)."""
        return await bot.edit_message_text(
            self.text,
            chat_id=self.chat_id,
            message_id=self.message_id,
            parse_mode=ParseMode.HTML,
            reply_markup=self.reply_markup,
        )

    def absorb(self, newer: Post) -> bool:
        """Only the newest text of a message matters."""
        if not isinstance(newer, EditPost):
            return False
        self.text = newer.text
        self.reply_markup = newer.reply_markup
        return True


def _upload(data: bytes, file_name: str, *, attach: bool = False) -> InputFile:
    """The file to upload; ``attach``: sent as an ``attach://`` part of an InputMedia."""
    return InputFile(io.BytesIO(data), filename=file_name, attach=attach)


@dataclass(eq=False)
class UploadPost:
    """A new photo, animation or document (bytes uploaded with a file name), with a caption."""

    kind: Literal["photo", "animation", "document"]
    chat_id: int
    thread_id: int
    data: bytes
    file_name: str
    caption: str
    reply_markup: InlineKeyboardMarkup | None = None
    reply_to: int | None = None
    key: str | None = None

    async def send(self, bot: Bot) -> Message:
        """Upload and send the file."""
        common: dict[str, Any] = {
            "caption": self.caption,
            "parse_mode": ParseMode.HTML,
            "reply_markup": self.reply_markup,
            "message_thread_id": self.thread_id or None,
            "reply_to_message_id": self.reply_to,
            "allow_sending_without_reply": True,
        }
        upload = _upload(self.data, self.file_name)
        if self.kind == "photo":
            return await bot.send_photo(self.chat_id, upload, **common)
        if self.kind == "animation":
            return await bot.send_animation(self.chat_id, upload, **common)
        return await bot.send_document(self.chat_id, upload, **common)

    def absorb(self, newer: Post) -> bool:
        """Uploads never merge."""
        return False


@dataclass(eq=False)
class KeyboardRemovalPost:
    """Take the buttons off a message (a board whose turn has passed)."""

    chat_id: int
    message_id: int
    key: str | None = None

    async def send(self, bot: Bot) -> Any:
        """Remove the message's inline keyboard (already bare counts as done)."""
        if isinstance(bot, QuickSender):
            return await bot.remove_inline_keyboard(self.chat_id, self.message_id)
        return await bot.edit_message_reply_markup(
            chat_id=self.chat_id, message_id=self.message_id, reply_markup=None
        )

    def absorb(self, newer: Post) -> bool:
        """Removals never merge."""
        return False


@dataclass(eq=False)
class PhotoEditPost:
    """A new picture, caption and keyboard for a photo message; a waiting one is replaced."""

    chat_id: int
    message_id: int
    data: bytes
    file_name: str
    caption: str
    reply_markup: InlineKeyboardMarkup | None = None
    key: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.key = f"edit:{self.message_id}"

    async def send(self, bot: Bot) -> Any:
        """Replace the message's photo, caption and keyboard."""
        media = InputMediaPhoto(
            _upload(self.data, self.file_name, attach=True),
            caption=self.caption,
            parse_mode=ParseMode.HTML,
        )
        return await bot.edit_message_media(
            media, chat_id=self.chat_id, message_id=self.message_id, reply_markup=self.reply_markup
        )

    def absorb(self, newer: Post) -> bool:
        """Only the newest picture of a message matters."""
        if not isinstance(newer, PhotoEditPost):
            return False
        self.data, self.file_name = newer.data, newer.file_name
        self.caption, self.reply_markup = newer.caption, newer.reply_markup
        return True
