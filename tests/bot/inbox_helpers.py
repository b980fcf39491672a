"""Updates, a stand-in application and dispatchers on a real inbox, for the dispatch tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import CallbackQuery, Chat, Message, Update, User

from telesnap.bot.ingress.dispatcher import InboxDispatcher
from telesnap.bot.ingress.intake import Intake, inbox_entry
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.render.callbacks import Action, CallbackSigner
from telesnap.coordination import coordination_for
from telesnap.services.inbox import InboxService, StoredUpdate
from telesnap.storage.database import session_factory
from telesnap.storage.uow import UnitsOfWork

SIGNER = CallbackSigner.for_token("123:secret")
SAFETY_S = 10.0
"""Only so that a broken dispatcher fails the test instead of hanging it."""
USER = User(7, "Ada", is_bot=False)


def message_update(update_id: int, chat_id: int, text: str = "/flip") -> Update:
    """A command in a group."""
    chat = Chat(id=chat_id, type=Chat.GROUP)
    message = Message(message_id=update_id, date=datetime.now(UTC), chat=chat, text=text)
    return Update(update_id=update_id, message=message)


def snap_press(update_id: int, chat_id: int) -> Update:
    """A press of a board's "Snap!" button."""
    message = Message(1, datetime.now(UTC), Chat(chat_id, Chat.GROUP))
    data = SIGNER.encode(Action.SNAP, game_id=3, version=5)
    query = CallbackQuery(f"q{update_id}", USER, "instance", message, data)
    return Update(update_id, callback_query=query)


Handle = Callable[[Update], Awaitable[None]]


class FakeApplication:
    """Stands in for python-telegram-bot's Application: ``process_update`` runs ``handle``."""

    bot: Any = None

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self.seen: list[int] = []

    async def process_update(self, update: Update) -> None:
        self.seen.append(update.update_id)
        await self._handle(update)


class Worker:
    """One dispatcher with its intake over an engine: a "worker" in one test process."""

    def __init__(
        self,
        engine: AsyncEngine,
        handle: Handle,
        *,
        slots: int = 256,
        sweep_s: float = 3600.0,
    ) -> None:
        self.engine = engine
        self.application = FakeApplication(handle)
        self.book = ReceiptBook(SIGNER, "test-host")
        self.inbox = InboxService(UnitsOfWork(session_factory(engine)))
        self.coordination = coordination_for(engine)
        """Started and closed with the worker (:meth:`start`, :meth:`stop`)."""
        self.dispatcher = InboxDispatcher(
            self.application,  # type: ignore[arg-type]
            self.book,
            self.inbox,
            self.coordination,
            max_concurrent_updates=slots,
            sweep_s=sweep_s,
        )
        self.intake = Intake(self.book, self.inbox, self.dispatcher)

    async def start(self) -> None:
        """Join the workers (listening for wake-ups) and take what is pending, as the app does."""
        await self.coordination.start(self.dispatcher.wake)
        await self.dispatcher.start()
        await self.coordination.joined()

    async def stop(self) -> None:
        """Drain, then let go of every claim, as the app does."""
        await self.dispatcher.drain()
        await self.coordination.close()

    def stamped(self, *updates: Update) -> list[StoredUpdate]:
        """Stamp updates here and return what the inbox would store of them."""
        arrivals = self.book.stamp(updates)
        return [
            inbox_entry(arrival, update.update_id, update.to_dict())
            for arrival, update in zip(arrivals, updates, strict=True)
        ]

    async def receive(self, *updates: Update) -> None:
        """Hand updates over as the webhook or long polling would."""
        await self.intake.receive(list(updates), [update.to_dict() for update in updates])


class Counter:
    """Counts handled updates; ``reached(n)`` waits (event-driven) until ``n`` were handled."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = asyncio.Event()

    def add(self) -> None:
        """One more."""
        self.count += 1
        self._changed.set()

    async def reached(self, n: int) -> None:
        """Wait until at least ``n`` (within the safety limit)."""
        async with asyncio.timeout(SAFETY_S):
            while self.count < n:
                self._changed.clear()
                await self._changed.wait()
