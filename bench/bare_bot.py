"""The floor the framework sets: a python-telegram-bot bot with no database and no game.

Run by bench/bot.py as a subprocess:
.venv/bin/python bench/bare_bot.py API_URL TOKEN [--transport httpx|aiohttp]

``/start`` in a chat posts a message with one button. Each press is answered
(an empty toast, like a Flip) and the message is edited to a new count, with
the button kept. Updates are handled concurrently, as in the full bot, and the
HTTP pools are sized as the full bot's are. ``--transport aiohttp`` sends the
calls through telesnap's aiohttp backend instead of python-telegram-bot's
default (httpx), as the full bot does.
"""

from __future__ import annotations

import argparse
import os

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes
from telegram.request import BaseRequest, HTTPXRequest

from telesnap.bot.ingress.transport import AiohttpRequest

os.environ.setdefault("PTB_TIMEDELTA", "1")
presses: dict[int, int] = {}
KEYBOARD = InlineKeyboardMarkup([[InlineKeyboardButton("Press", callback_data="press")]])


async def on_start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if update.effective_chat is not None:
        await context.bot.send_message(update.effective_chat.id, "Pressed 0", reply_markup=KEYBOARD)


async def on_press(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    chat = update.effective_chat
    if query is None or chat is None:
        return
    await query.answer()
    count = presses[chat.id] = presses.get(chat.id, 0) + 1
    await query.edit_message_text(f"Pressed {count}", reply_markup=KEYBOARD)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("api_url")
    parser.add_argument("token")
    parser.add_argument("--transport", choices=("httpx", "aiohttp"), default="httpx")
    args = parser.parse_args()
    request: BaseRequest
    polling: BaseRequest
    if args.transport == "aiohttp":
        request = AiohttpRequest(connection_pool_size=64)
        polling = AiohttpRequest(connection_pool_size=2, read_timeout=40.0)
    else:
        request = HTTPXRequest(connection_pool_size=64, read_timeout=15.0, write_timeout=15.0)
        polling = HTTPXRequest(connection_pool_size=2, read_timeout=40.0)
    application = (
        Application.builder()
        .token(args.token)
        .base_url(f"{args.api_url}/bot")
        .base_file_url(f"{args.api_url}/file/bot")
        .request(request)
        .get_updates_request(polling)
        .concurrent_updates(256)
        .build()
    )
    application.add_handler(CommandHandler("start", on_start))
    application.add_handler(CallbackQueryHandler(on_press))
    application.run_polling(poll_interval=0.0, timeout=30, drop_pending_updates=False)


if __name__ == "__main__":
    main()
