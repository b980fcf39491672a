"""Connecting to the Bot API server, and what python-telegram-bot's errors say of it.

A gateway away is waited out; a page that is not JSON means no Bot API at all. Its messages
can hold a whole HTML page, so the log gets only the status.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from telegram.error import Conflict, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application

from ...config import ConfigError
from ...support.retry import Backoff

__all__ = [
    "REVOKED_TOKEN_TRACEBACK",
    "connect",
    "log_polling_error",
    "revoked_token",
    "short_reason",
]

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
    elif isinstance(error, RetryAfter):  # python-telegram-bot waits it out (without a word)
        logger.warning("long polling: the Bot API asks to wait (flood control); retrying")
    else:
        logger.warning("long polling failed (%s); retrying", short_reason(error), exc_info=error)


class _NoTracebackOfARefusedToken(logging.Filter):
    """A refused token's record without its traceback: the runner says it in a line and stops.

    python-telegram-bot's polling loop logs it on ``telegram.ext`` with its traceback (not its
    documented behaviour: e2e/test_start_checks.py's revoked token test is this seam's test).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], InvalidToken):
            record.exc_info, record.exc_text = None, None
        return True


REVOKED_TOKEN_TRACEBACK = _NoTracebackOfARefusedToken()
"""The one filter, added to ``telegram.ext`` (adding it again changes nothing)."""


def revoked_token(api_url: str, error: TelegramError) -> str:
    """Why a running bot stopped: the Bot API refused its token (a 401).

    Nothing it asks would work again, and a bot that kept running would look alive while
    deaf: it stops, and its exit says what to do.
    """
    return (
        f"TELESNAP_TOKEN was refused by the Bot API server at {api_url} while the bot ran"
        f" ({short_reason(error)}): it was revoked or replaced; give the new one"
    )


async def connect(application: Application[Any, Any, Any, Any, Any, Any], api_url: str) -> None:
    """Initialize ``application`` (its ``getMe``), waiting with backoff while the API is away.

    A refusal (of the token: a 401, or Telegram's 404; any other but a 429) and an answer
    that is not JSON, or no bot, stop the start: the token, or the URL, is wrong, and waiting
    changes neither. A 429's wait, and a gateway's 502, 503 or 504 page, are waited out: a
    proxy says so while the API restarts.
    """
    backoff = Backoff(1.0, 30.0)
    while True:
        try:
            try:  # the bot's own start (its getMe) first: only its answer's reading is judged here
                await application.bot.initialize()
            except (TypeError, KeyError, ValueError):  # JSON, but its getMe is no bot
                raise ConfigError(
                    f"TELESNAP_API_URL ({api_url}) answers getMe with something that is no bot:"
                    " it is not the root of a Bot API server"
                ) from None
            await application.initialize()
            return
        except RetryAfter as error:
            after = error.retry_after
            wait = float(after if isinstance(after, int | float) else after.total_seconds())
            logger.warning("the Bot API asks to wait (flood control); retrying in %.0f s", wait)
            await asyncio.sleep(wait)
        except NetworkError as error:
            if answered_but_is_no_bot_api(error):
                raise _not_the_bot_api(api_url, error) from None
            delay = backoff.next()
            reason = short_reason(error)
            logger.warning("the Bot API is unreachable (%s); retrying in %.0f s", reason, delay)
            await asyncio.sleep(delay)
        except TelegramError as error:  # a refusal no Bot API gives a getMe it takes
            raise _not_the_bot_api(api_url, error) from None


def _not_the_bot_api(api_url: str, error: TelegramError) -> ConfigError:
    """Name both suspects; never the token (python-telegram-bot's message holds it)."""
    if isinstance(error.__cause__, InvalidToken):
        error = error.__cause__  # the server's own answer
    return ConfigError(
        f"TELESNAP_TOKEN was refused by the Bot API server at {api_url} ({short_reason(error)}),"
        " or TELESNAP_API_URL is not the root of a Bot API server"
    )
