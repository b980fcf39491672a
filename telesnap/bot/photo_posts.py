"""Pictures with buttons: a photo sent with a keyboard, and the new picture of such a message.

The leaderboard picture keeps its ranking buttons; pressing one replaces the
picture, its caption and its keyboard in one ``editMessageMedia`` call. Both are
posts for the outbox, so the chat's flood limits hold.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, InputFile, InputMediaPhoto, Message
from telegram.constants import ParseMode

from .outbox import Post

__all__ = ["PhotoEditPost", "PhotoPost"]


def _upload(data: bytes, file_name: str, *, attach: bool = False) -> InputFile:
    """The file to upload; ``attach``: sent as an ``attach://`` part of an InputMedia."""
    return InputFile(io.BytesIO(data), filename=file_name, attach=attach)


@dataclass(eq=False)
class PhotoPost:
    """A new photo (PNG bytes) with an HTML caption and a keyboard."""

    chat_id: int
    thread_id: int
    data: bytes
    file_name: str
    caption: str
    reply_markup: InlineKeyboardMarkup | None = None
    reply_to: int | None = None
    key: str | None = None

    async def send(self, bot: Bot) -> Message:
        """Upload and send the photo."""
        return await bot.send_photo(
            self.chat_id,
            _upload(self.data, self.file_name),
            caption=self.caption,
            parse_mode=ParseMode.HTML,
            reply_markup=self.reply_markup,
            message_thread_id=self.thread_id or None,
            reply_to_message_id=self.reply_to,
            allow_sending_without_reply=True,
        )

    def absorb(self, newer: Post) -> bool:
        """Photos never merge."""
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
