"""What a chat's sender does when a send fails: the failures stay in their chat.

A 429 waits out its ``retry_after``, network and server errors are retried with backoff, and a
message that cannot go out (a 400, or :data:`OWN_FAULT_ATTEMPTS` faults of our own) is set
aside so the chat goes on. A 403 (the bot was removed) ends the chat.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from telegram.error import BadRequest, RetryAfter, TelegramError

from ...support.retry import Backoff
from ..render.notices import UnknownNoticeError

__all__ = ["OWN_FAULT_ATTEMPTS", "SendFailures", "is_refused_for_good", "is_unchanged"]

logger = logging.getLogger(__name__)

OWN_FAULT_ATTEMPTS = 3
"""How often a message whose sending raises an error of our own is tried before it is set aside."""
_SEND_RETRY_S = (1.0, 5.0)
"""A failed send is tried again after 1 s, then twice as long each time, up to 5 s: a chat
goes on within 5 s of the Bot API's return, however long it was away (the pace's slots
bound what the retries of all chats send meanwhile)."""


def is_refused_for_good(error: Exception) -> bool:
    """Whether sending again cannot help: Telegram refused the message, or it cannot be drawn."""
    return isinstance(error, BadRequest | UnknownNoticeError)


def is_unchanged(error: BadRequest) -> bool:
    """Whether Telegram refused an edit only because it changes nothing: it counts as done."""
    return "not modified" in str(error).lower()


def is_gone(error: BadRequest) -> bool:
    """Whether Telegram refused an edit because the message is gone (someone deleted it)."""
    text = str(error).lower()
    return "message" in text and "not found" in text


@dataclass(eq=False)
class SendFailures:
    """One chat's failed sends: its backoff, and the own faults of each message."""

    chat_id: int
    backoff: Backoff = field(default_factory=lambda: Backoff(*_SEND_RETRY_S))
    faults: dict[int, int] = field(default_factory=dict)
    """Own faults by message: the first row of a head, or the id of a direct post."""

    def succeeded(self, key: int) -> None:
        """Message ``key`` went out: its count and the chat's backoff start again."""
        self.faults.pop(key, None)
        self.backoff.reset()

    def own_fault_is_last(self, error: Exception, key: int) -> bool:
        """Count ``error`` if it is a fault of our own; whether message ``key`` had its tries."""
        if isinstance(error, TelegramError):
            return False
        self.faults[key] = self.faults.get(key, 0) + 1
        if self.faults[key] < OWN_FAULT_ATTEMPTS:
            return False
        del self.faults[key]
        return True

    async def wait_to_retry(
        self, error: Exception, what: str, sleep: Callable[[float], Awaitable[None]]
    ) -> None:
        """Log the failure of ``what`` and wait before it is tried again.

        Not for a 403: the chat is gone, and nothing is tried again there.
        """
        if isinstance(error, RetryAfter):
            after = error.retry_after
            delay = after if isinstance(after, int | float) else after.total_seconds()
            logger.warning("chat %s: flood control, waiting %.1f s", self.chat_id, delay)
        else:
            delay = self.backoff.next()
            # A fault of our own is a defect: an error, with its traceback; Telegram's or
            # the network's is a warning.
            own = not isinstance(error, TelegramError)
            logger.log(
                logging.ERROR if own else logging.WARNING,
                "chat %s: sending %s failed (%r); retrying in %.1f s",
                self.chat_id,
                what,
                error,
                delay,
                exc_info=error if own else None,
            )
        await sleep(delay)
