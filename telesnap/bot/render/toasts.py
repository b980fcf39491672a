"""Answering button presses (toasts), retried while the press can still be answered.

Telegram refuses an answer some 15 s after the press, and until then the button spins; a
toast lost to one 5xx, 429 or dropped connection would leave the player guessing. So
:func:`answer_toast` retries those until a retry could no longer arrive ``ANSWER_MARGIN_S``
before expiry, and never retries a refusal. Answers skip the flood limits: Telegram does
not limit answerCallbackQuery, and a toast must not wait behind the chat's messages.
"""

from __future__ import annotations

import asyncio
import gettext
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from telegram import Bot, Update
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError

from ...support.bounded import BoundedDict
from ...support.retry import Backoff
from .i18n import language_of, translator

logger = logging.getLogger(__name__)

QUERY_LIFETIME_S = 15.0
"""How long after a press Telegram still takes its answer."""
ANSWER_MARGIN_S = 3.0
"""No retry is started later than this before the press expires."""
ASSUMED_AGE_S = 3.0
"""How old a press is taken to be when its receipt is not known (the bot answers
within the tie window, at most 2 s, plus its own handling)."""
_ANSWER_RETRY_S = (0.2, 2.0)
"""A failed answer is tried again after 0.2 s, then twice as long each time, up to 2 s."""


def last_try_ns(received_ns: int) -> int:
    """The last moment (wall-clock ns) an answer to a press received at ``received_ns`` is tried."""
    return received_ns + int((QUERY_LIFETIME_S - ANSWER_MARGIN_S) * 1e9)


def expires_ns(received_ns: int) -> int:
    """When Telegram stops taking an answer to a press received at ``received_ns``."""
    return received_ns + int(QUERY_LIFETIME_S * 1e9)


class AnsweredPresses:
    """The ids of the button presses answered lately (at most ``limit`` are kept).

    A press can only be answered within seconds, so forgetting the oldest loses nothing.

    >>> answered = AnsweredPresses(limit=2)
    >>> for query_id in ("a", "b", "c"):
    ...     answered.add(query_id)
    >>> "a" in answered, "c" in answered
    (False, True)
    """

    def __init__(self, limit: int = 10_000) -> None:
        self._ids: BoundedDict[str, None] = BoundedDict(limit)

    def add(self, query_id: str) -> None:
        """Remember that the press ``query_id`` was answered."""
        self._ids[query_id] = None

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._ids


def was_answered(bot: object, query_id: str) -> bool:
    """Whether the bot (the application's remembers them) has answered ``query_id`` already."""
    answered = getattr(bot, "answered_presses", None)
    return isinstance(answered, AnsweredPresses) and query_id in answered


async def answer_toast(
    bot: Bot,
    query_id: str,
    text: str | None,
    *,
    received_ns: int | None = None,
    clock_ns: Callable[[], int] = time.time_ns,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> bool:
    """Answer press ``query_id`` with ``text``; return whether Telegram took the answer.

    ``received_ns``: the press's receipt stamp (wall-clock ns), so retries stop in time.
    """
    if was_answered(bot, query_id):  # Telegram refuses a second answer
        return False
    received = received_ns if received_ns is not None else clock_ns() - int(ASSUMED_AGE_S * 1e9)
    last_ns = last_try_ns(received)
    backoff = Backoff(*_ANSWER_RETRY_S)
    while True:
        try:
            await bot.answer_callback_query(query_id, text)
            return True
        except BadRequest as error:
            # Too old, or answered already: another try gets the same answer.
            logger.warning("press %s: Telegram refused the answer: %s", query_id, error)
            return False
        except RetryAfter as error:
            delay = error.retry_after
            wait = float(delay if isinstance(delay, int | float) else delay.total_seconds())
            failure: TelegramError = error
        except NetworkError as error:  # a 5xx, a timeout or a dropped connection
            wait = backoff.next()
            failure = error
        except TelegramError as error:
            logger.warning("press %s: could not answer: %s", query_id, error)
            return False
        left_s = (last_ns - clock_ns()) / 1e9
        if wait > left_s:
            logger.error("press %s: gave up answering (%s): it expires first", query_id, failure)
            return False
        logger.warning("press %s: answer failed (%s); retrying in %.1f s", query_id, failure, wait)
        await sleep(wait)


async def answer_unfinished(
    bot: Bot, presses: Sequence[tuple[str, int]], clock_ns: Callable[[], int] = time.time_ns
) -> int:
    """Stop the spinning of presses a stop may have left unanswered; how many Telegram took.

    ``presses``: presses whose change was committed but whose handlers never ended; their
    effect is on the board, so the answer has no text (one answered already is refused).
    """
    now = clock_ns()
    answerable = [(query_id, stamp) for query_id, stamp in presses if last_try_ns(stamp) > now]
    answered = await asyncio.gather(
        *(answer_toast(bot, query_id, None, received_ns=stamp) for query_id, stamp in answerable)
    )
    logger.info(
        "answered %d of the %d press(es) the stop may have left unanswered",
        sum(answered),
        len(presses),
    )
    return sum(answered)


TextOf = Callable[[gettext.NullTranslations], str]
"""A text in the language of a translation."""


def press_toast(
    bot: Bot, spawn: Callable[[Coroutine[Any, Any, Any]], None]
) -> Callable[[Update, TextOf], None]:
    """What answers a press at intake, before any handler: a text in the presser's language."""

    def answer(update: Update, text_of: TextOf) -> None:
        query = update.callback_query
        if query is not None:
            tr = translator(language_of(query.from_user.language_code))
            spawn(answer_toast(bot, query.id, text_of(tr)))

    return answer
