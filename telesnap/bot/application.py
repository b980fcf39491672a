"""The python-telegram-bot Application: the stamping bot, update ordering, handlers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram import InlineKeyboardMarkup, Update
from telegram.constants import ParseMode
from telegram.ext import (
    Application,
    ApplicationBuilder,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    ChatMemberHandler,
    ExtBot,
    MessageHandler,
    TypeHandler,
    filters,
)

from ..services.locks import KeyedLocks
from .buttons import button_handlers, on_unknown_button
from .commands import command_handlers, forget_receipt, on_unknown_command
from .errors import AnsweredPresses, on_error
from .membership import on_my_chat_member
from .receipts import ReceiptBook, topic_key
from .stats_handlers import register_stats_handlers
from .transport import AiohttpRequest

BotApplication = Application[Any, Any, Any, Any, Any, Any]


class StampingBot(ExtBot[None]):
    """A bot that stamps every batch of updates the moment ``getUpdates`` returns it.

    It talks to ``api_url`` (Telegram, a self-hosted Bot API server or the
    emulator) through two aiohttp connection pools: one for the calls, one for
    the long polls.
    """

    def __init__(self, book: ReceiptBook, token: str, api_url: str) -> None:
        transports = (
            AiohttpRequest(connection_pool_size=64),
            AiohttpRequest(connection_pool_size=2, read_timeout=40.0),
        )
        super().__init__(
            token,
            base_url=f"{api_url}/bot",
            base_file_url=f"{api_url}/file/bot",
            request=transports[0],
            get_updates_request=transports[1],
        )
        with self._unfrozen():
            self.receipt_book = book
            self.transports = transports
            self.answered_presses = AnsweredPresses()

    async def answer_callback_query(
        self, callback_query_id: str, *args: Any, **kwargs: Any
    ) -> bool:
        """Answer a press, and remember it was answered (so it is never answered twice)."""
        answered = await super().answer_callback_query(callback_query_id, *args, **kwargs)
        self.answered_presses.add(callback_query_id)
        return answered

    async def send_message_returning_id(
        self,
        chat_id: int,
        text: str,
        *,
        reply_markup: InlineKeyboardMarkup | None,
        message_thread_id: int | None,
    ) -> int:
        """Send an HTML message and return its id, without parsing the whole reply.

        Boards are the bot's hot path, and building a full ``Message`` from each
        reply costs more than everything else the bot does with it.
        """
        result = await self._post(
            "sendMessage",
            {
                "chat_id": chat_id,
                "text": text,
                "parse_mode": ParseMode.HTML,
                "reply_markup": reply_markup,
                "message_thread_id": message_thread_id,
            },
        )
        return int(result["message_id"])

    async def close_transports(self) -> None:
        """Close both connection pools (also when the bot never finished starting)."""
        for transport in self.transports:
            await transport.shutdown()

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        """Fetch updates, then stamp them before anything else can delay them."""
        updates = await super().get_updates(*args, **kwargs)
        self.receipt_book.stamp(updates)
        return updates


UNBOUNDED = 2**31 - 1
"""The limit handed to python-telegram-bot's own slot (see ChatOrderedProcessor)."""


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Handles one chat topic's updates in arrival order, and different topics concurrently.

    An update first takes its topic's place in line, then one of the
    ``max_concurrent_updates`` slots: updates queued behind a busy topic wait
    without holding a slot, so one busy chat never stalls the others.

    Snap calls skip the topic's line (they only take a slot): they are decided
    by their stamps, and a flip waiting for a race to be decided must not hold
    back the calls of that race.
    """

    def __init__(self, book: ReceiptBook, max_concurrent_updates: int = 256) -> None:
        # python-telegram-bot's BaseUpdateProcessor.process_update (final) takes a
        # slot of its own semaphore, sized by the number given here, *before*
        # do_process_update: that order is what let a busy topic hold every slot.
        # So its semaphore is made too large to bind, and ours is taken after the
        # topic's lock. tests/bot/test_update_processor.py checks this seam.
        super().__init__(UNBOUNDED)
        if max_concurrent_updates < 1:
            raise ValueError("max_concurrent_updates must be a positive integer")
        self._slot_count = max_concurrent_updates
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._book = book
        self._locks: KeyedLocks[tuple[int, int]] = KeyedLocks()

    @property
    def slot_count(self) -> int:
        """How many updates are handled at once, at most."""
        return self._slot_count

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run the update's handlers, after the earlier updates of its topic."""
        key = topic_key(update) if isinstance(update, Update) else None
        if key is None or (isinstance(update, Update) and self._book.is_call(update)):
            async with self._slots:
                await coroutine
            return
        async with self._locks.get(key), self._slots:
            await coroutine

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""


def build_application(token: str, api_url: str, book: ReceiptBook) -> BotApplication:
    """The Application with every handler registered.

    It talks to ``api_url``: Telegram, a self-hosted Bot API server, or the emulator.
    """
    bot = StampingBot(book, token, api_url)
    application = (
        ApplicationBuilder().bot(bot).concurrent_updates(ChatOrderedProcessor(book)).build()
    )
    register_stats_handlers(application)
    application.add_handlers([*command_handlers(), *button_handlers()])
    application.add_handler(CallbackQueryHandler(on_unknown_button))
    application.add_handler(MessageHandler(filters.COMMAND, on_unknown_command))
    application.add_handler(ChatMemberHandler(on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER))
    # Runs after the handlers above, for every update: drop its receipt whatever happened.
    application.add_handler(TypeHandler(Update, forget_receipt), group=1)
    application.add_error_handler(on_error)
    return application
