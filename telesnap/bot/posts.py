"""The posts the bot sends through the outbox: boards, lobby edits and plain replies."""

from __future__ import annotations

import gettext
import io
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from telegram import Bot, InlineKeyboardMarkup, InputFile, Message
from telegram.constants import ParseMode

from ..services.views import TableView
from .callbacks import CallbackSigner
from .digest import BoardEvent, board_lines, fits_together
from .outbox import Post
from .render import board_keyboard, compose_board

logger = logging.getLogger(__name__)

BoardShown = Callable[[TableView, int], Awaitable[None]]


@runtime_checkable
class QuickSender(Protocol):
    """A bot that can send a message and return only its id (see ``StampingBot``)."""

    async def send_message_returning_id(
        self,
        chat_id: int,
        text: str,
        *,
        reply_markup: InlineKeyboardMarkup | None,
        message_thread_id: int | None,
    ) -> int:
        """Send an HTML message; return its message id."""


@dataclass(eq=False)
class BoardPost:
    """A new message showing a game's table, with the events since the previous one."""

    chat_id: int
    thread_id: int
    events: list[BoardEvent]
    table: TableView
    signer: CallbackSigner
    tr: gettext.NullTranslations
    on_shown: BoardShown | None = None
    key: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.key = f"board:{self.table.game_id}"

    async def send(self, bot: Bot) -> int:
        """Send the board; then report the message as shown (for reaction times)."""
        text = compose_board(board_lines(self.events, self.table, self.tr), self.table, self.tr)
        keyboard = board_keyboard(self.table, self.signer, self.tr)
        thread = self.thread_id or None
        if isinstance(bot, QuickSender):
            message_id = await bot.send_message_returning_id(
                self.chat_id, text, reply_markup=keyboard, message_thread_id=thread
            )
        else:
            message = await bot.send_message(
                self.chat_id,
                text,
                parse_mode=ParseMode.HTML,
                reply_markup=keyboard,
                message_thread_id=thread,
            )
            message_id = message.message_id
        if self.on_shown is not None:
            try:
                await self.on_shown(self.table, message_id)
            except Exception:
                # The board is out: sending it again would show it twice, so only
                # the moment it was shown (for reaction times) is lost, and logged.
                logger.exception(
                    "chat %s, game %s: noting board %s as shown failed",
                    self.chat_id,
                    self.table.game_id,
                    self.table.board_version,
                )
        return message_id

    def absorb(self, newer: Post) -> bool:
        """Take a newer board of the same game: its events are added, its table shown.

        A board full even when summarised takes no more: the newer one goes out after it.
        """
        if not isinstance(newer, BoardPost):
            return False
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


@dataclass(eq=False)
class UploadPost:
    """A new photo or document (bytes uploaded with a file name), with an HTML caption."""

    kind: Literal["photo", "document"]
    chat_id: int
    thread_id: int
    data: bytes
    file_name: str
    caption: str
    reply_to: int | None = None
    key: str | None = None

    async def send(self, bot: Bot) -> Message:
        """Upload and send the file."""
        upload = InputFile(io.BytesIO(self.data), filename=self.file_name)
        common: dict[str, Any] = {
            "caption": self.caption,
            "parse_mode": ParseMode.HTML,
            "message_thread_id": self.thread_id or None,
            "reply_to_message_id": self.reply_to,
            "allow_sending_without_reply": True,
        }
        if self.kind == "photo":
            return await bot.send_photo(self.chat_id, upload, **common)
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
        return await bot.edit_message_reply_markup(
            chat_id=self.chat_id, message_id=self.message_id, reply_markup=None
        )

    def absorb(self, newer: Post) -> bool:
        """Removals never merge."""
        return False
