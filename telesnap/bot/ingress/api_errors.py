"""What python-telegram-bot's errors say about the Bot API server, in a few words.

A gateway away is waited out; a page that is not JSON means no Bot API at all. Its messages
can hold a whole HTML page, so the log gets only the status.
"""

from __future__ import annotations

import logging
import re

from telegram.error import Conflict, NetworkError, RetryAfter, TelegramError

__all__ = ["answered_but_is_no_bot_api", "log_polling_error", "revoked_token", "short_reason"]

logger = logging.getLogger("telesnap.app")
"""The start's logger: these lines are about the bot's connection, as the start's are."""

_STATUS_OF_A_PAGE = re.compile(r"[^(]*\((\d{3})\)\. Parsing the server response")
"""python-telegram-bot's message for an answer that is not JSON: "Not Found (404). Parsing…"."""
GATEWAY_STATUSES = frozenset({502, 503, 504})
"""The statuses of a page a proxy in front of the Bot API answers while it is away."""


def answered_but_is_no_bot_api(error: NetworkError) -> bool:
    """Whether a server answered with a page that is not JSON, and no gateway's."""
    page = _STATUS_OF_A_PAGE.match(error.message)
    return page is not None and int(page[1]) not in GATEWAY_STATUSES


def short_reason(error: TelegramError) -> str:
    """The server's answer in a few words: python-telegram-bot's message holds a whole page."""
    reason = error.message.partition(". Parsing the server response")[0]
    if isinstance(error.__cause__, (TelegramError, ValueError)):
        reason += ", in an answer that is not JSON"
    return reason


def log_polling_error(error: TelegramError) -> None:
    """One line per failed ``getUpdates`` (it is retried); a traceback only if no outage."""
    if isinstance(error, NetworkError):
        logger.warning(
            "long polling: the Bot API is unreachable (%s); retrying", short_reason(error)
        )
    elif isinstance(error, Conflict):  # another `telesnap run`, or a webhook set meanwhile
        logger.warning(
            "long polling: another process polls with this token (%s); retrying",
            short_reason(error),
        )
    elif isinstance(error, RetryAfter):  # python-telegram-bot waits it out
        logger.warning("long polling: the Bot API asks to wait (flood control); retrying")
    else:
        logger.warning("long polling failed (%s); retrying", short_reason(error), exc_info=error)


def revoked_token(api_url: str, error: TelegramError) -> str:
    """Why a running bot stopped: the Bot API refused its token (a 401).

    Nothing it asks would work again, and a bot that kept running would look alive while
    deaf: it stops, and its exit says what to do.
    """
    return (
        f"TELESNAP_TOKEN was refused by the Bot API server at {api_url} while the bot ran"
        f" ({short_reason(error)}): it was revoked or replaced; give the new one"
    )
