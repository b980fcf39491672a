"""What the bot says directly, not from the outbox: texts, edits, files, pictures, bare buttons.

Only what no change produces goes this way, still through the chat's sender (:mod:`.sender`)
and within the flood limits; a waiting edit is replaced by a newer one of the same message.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from telegram import Bot, InlineKeyboardMarkup, InputFile, InputMediaPhoto, Message
from telegram.constants import ParseMode


class Post(Protocol):
    """Something the bot says directly: one Bot API call."""

    chat_id: int
    key: str | None
    """A waiting post with the same key is replaced by this one (None: never)."""

    async def send(self, bot: Bot) -> Any:
        """Make the API call; return its result."""


class QuickSender(Protocol):
    """The two hot calls, made without parsing Telegram's reply.

    The senders are given no bot but the application's (``StampingBot``), which has them.
    """

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


@dataclass(eq=False)
class KeyboardRemovalPost:
    """Take the buttons off a message (a board whose turn has passed)."""

    chat_id: int
    message_id: int
    key: str | None = None

    async def send(self, bot: Bot) -> Any:
        """Remove the message's inline keyboard (already bare counts as done)."""
        await cast(QuickSender, bot).remove_inline_keyboard(self.chat_id, self.message_id)


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
