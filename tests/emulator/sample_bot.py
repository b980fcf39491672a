"""A minimal python-telegram-bot bot that exercises what the emulator emulates."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import TelegramError
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from telesnap.emulator.testing import RunningEmulator, application_builder

KEYBOARD = InlineKeyboardMarkup(
    [
        [
            InlineKeyboardButton("Flip", callback_data="flip"),
            InlineKeyboardButton("Same again", callback_data="same"),
        ]
    ]
)


class SampleBot:
    """/start greets with a keyboard; Flip edits the message; Same again edits to the same."""

    def __init__(self, running: RunningEmulator) -> None:
        self.application = application_builder(running).build()
        self.errors: list[TelegramError] = []
        self.application.add_handler(CommandHandler("start", self.start))
        self.application.add_handler(CallbackQueryHandler(self.flip, pattern="^flip$"))
        self.application.add_handler(CallbackQueryHandler(self.same, pattern="^same$"))

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message
        assert update.effective_user
        name = html.escape(update.effective_user.first_name)
        await update.effective_message.reply_html(
            f"Hello <b>{name}</b> &lt;3", reply_markup=KEYBOARD
        )

    async def flip(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query
        assert query.message
        await query.answer("Flipped!")
        await query.edit_message_text(
            f"Flipped by {query.from_user.first_name}", reply_markup=KEYBOARD
        )

    async def same(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query
        assert query.message
        await query.answer()
        try:
            message = query.message
            assert isinstance(message, Message)
            await query.edit_message_text(
                message.text_html, parse_mode="HTML", reply_markup=KEYBOARD
            )
        except TelegramError as error:
            self.errors.append(error)


@asynccontextmanager
async def polling(
    application: Application[Any, Any, Any, Any, Any, Any], **options: Any
) -> AsyncIterator[None]:
    """Run ``application`` with long polling for the duration of the block."""
    async with application:
        await application.start()
        assert application.updater is not None
        await application.updater.start_polling(poll_interval=0, timeout=5, **options)
        try:
            yield
        finally:
            await application.updater.stop()
            await application.stop()
