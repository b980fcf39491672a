"""What carries the bot's work out: the outbox lanes, and the background jobs.

Nothing is queued for a chat that removed the bot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from ...support.bounded import BoundedDict
from .lanes import Outbox

logger = logging.getLogger(__name__)

REMOVED_CHATS_KEPT = 10_000
"""How many chats that removed the bot are remembered (so nothing is sent there)."""


@dataclass(eq=False)
class Courier:
    """Queues posts in the outbox and runs background jobs, keeping a reference to each."""

    outbox: Outbox
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _removed_chats: BoundedDict[int, None] = field(
        default_factory=lambda: BoundedDict(REMOVED_CHATS_KEPT)
    )

    def close_chat(self, chat_id: int) -> bool:
        """Send nothing more to the chat; whether it was open until now."""
        if chat_id in self._removed_chats:
            return False
        self._removed_chats[chat_id] = None
        return True

    def open_chat(self, chat_id: int) -> None:
        """Posts may go to the chat again."""
        self._removed_chats.pop(chat_id, None)

    def is_closed(self, chat_id: int) -> bool:
        """Whether nothing is sent to the chat (it removed the bot)."""
        return chat_id in self._removed_chats

    def submit(self, chat_id: int, post: Any) -> asyncio.Future[Any]:
        """Queue a post in the chat's lane (nothing goes to a closed chat).

        A post that fails for good is logged by the outbox; its future's exception
        is taken here so that asyncio does not report it as never retrieved.
        """
        if chat_id in self._removed_chats:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            future.set_exception(ChatGoneError(chat_id))
        else:
            future = self.outbox.submit(chat_id, post)
        future.add_done_callback(_retrieve)
        return future

    def submit_next(self, chat_id: int, post: Any) -> None:
        """Queue a post right behind the post being sent (tidying); never to a closed chat."""
        if chat_id not in self._removed_chats:
            self.outbox.submit_next(chat_id, post).add_done_callback(_retrieve)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run a coroutine in the background, keeping a reference until it ends.

        A background job that fails is logged; it stops nothing else.
        """
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)

    async def settle(self) -> None:
        """Wait until the background work started so far (and what it started) is done."""
        while pending := [task for task in self._tasks if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    async def close(self) -> None:
        """Let the outbox send what it holds (briefly), then stop it and the background jobs."""
        try:
            async with asyncio.timeout(5.0):
                await self.outbox.flush()
        except TimeoutError:
            logger.warning(
                "stopping with messages unsent; the boards among them are sent at the next"
                " start, or by another worker"
            )
        await self.outbox.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class ChatGoneError(Exception):
    """A post for a chat that removed the bot: it was not sent."""

    def __init__(self, chat_id: int) -> None:
        super().__init__(f"chat {chat_id} removed the bot")
        self.chat_id = chat_id


def _log_failure(task: asyncio.Task[Any]) -> None:
    """Log a background job that raised (and take its exception, so it is not reported twice)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("background job %s failed: %r", task.get_coro(), error, exc_info=error)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Take a finished post's exception (the outbox has logged it)."""
    if not future.cancelled():
        future.exception()
