"""The last boundary of an update: a handler that raised is logged and answered.

:func:`on_error` logs the failure with its update, chat and game and answers whoever waits,
never a press twice (``answer_toast`` skips one answered already).
"""

from __future__ import annotations

import asyncio
import html
import logging

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from telegram import Update
from telegram.error import ChatMigrated, Forbidden
from telegram.ext import ContextTypes

from ...services.types import Place
from ..render.i18n import language_of, translator
from ..render.toasts import answer_toast
from .context import place_of_update
from .runtime import Runtime, runtime_of

logger = logging.getLogger(__name__)

GAME_LOOKUP_TIMEOUT_S = 2.0
"""How long the error handler waits to learn which game a failed command concerned."""


AWAY_SQLSTATES = frozenset(
    {"08000", "08001", "08003", "08004", "08006", "53300", "57P01", "57P02", "57P03",
     "40001", "40P01", "25006"}
)  # fmt: skip
"""PostgreSQL's codes of a server away or busy for a while: a lost or refused connection, too
many clients, shut down or starting up, a transaction that lost a serialisation or a deadlock,
a read-only server (a failover under way). SQLAlchemy maps most to a plain ``DBAPIError``."""
_NOT_ACCEPTING = "55000"
"""Also a catch-all code: away only with "not currently accepting connections"."""


def is_transient_database_error(error: BaseException | None) -> bool:
    """Whether ``error`` is the database being away (reset, refused, timed out): worth a retry."""
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    sqlstate = getattr(error.orig, "sqlstate", None) if isinstance(error, DBAPIError) else None
    if sqlstate in AWAY_SQLSTATES:
        return True
    if sqlstate == _NOT_ACCEPTING and "accepting connections" in str(error):
        return True
    transient = (OperationalError, InterfaceError, DisconnectionError, PoolTimeoutError)
    return isinstance(error, (*transient, ConnectionError, TimeoutError))


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log a handler's failure with its update, chat and game; answer whoever waits.

    An update that met a database failure runs again (``ReceiptBook.retry_later``): it answers then.
    """
    error = context.error
    if not isinstance(update, Update):
        # Not a user's update: a network error of the poller, say. Nobody waits.
        logger.error("background failure: %r", error, exc_info=error)
        return
    runtime = runtime_of(context)
    if is_transient_database_error(error) and runtime.book.retry_later(update.update_id):
        logger.warning(
            "update %s met a database failure; it runs again: %r", update.update_id, error
        )
        return
    place = place_of_update(update)
    query = update.callback_query
    game_id: int | None = None
    if query is not None:
        press = runtime.signer.decode(query.data)
        game_id = press.game_id if press is not None else None
    elif place is not None:
        game_id = await _game_at(runtime, place)
    logger.error(
        "update %s failed (chat %s, topic %s, game %s): %r",
        update.update_id,
        place.chat_id if place else None,
        place.thread_id if place else None,
        game_id if game_id is not None else "none",
        error,
        exc_info=error,
    )
    if isinstance(error, Forbidden | ChatMigrated) and place is not None:
        runtime.bot_removed(place.chat_id)
        return
    user = update.effective_user
    language = user.language_code if user else None
    tr = translator(language_of(language))  # a toast: the presser's language
    if query is not None:  # not if it was answered already (answer_toast says nothing then)
        text = tr.gettext("⚠️ Something went wrong on my side. Please try again.")
        await answer_toast(context.bot, query.id, text)  # retried, and logged if it fails
        return
    message = update.effective_message
    if message is not None and place is not None and message.text:
        command = message.text.split()[0].split("@")[0]
        tr = runtime.translations(place, language)  # as last read: the database may be what failed
        runtime.say(
            place,
            tr.gettext(
                "⚠️ Something went wrong on my side with {command}. Please try again in a moment."
            ).format(command=html.escape(command)),
            message.message_id,
            written_in=tr,
        )


async def _game_at(runtime: Runtime, place: Place) -> int | None:
    """The topic's game, if the database can say so quickly (it may be what failed)."""
    try:
        async with asyncio.timeout(GAME_LOOKUP_TIMEOUT_S):
            return await runtime.lobby.active_game_id(place)
    except Exception as lookup_error:  # the failure being reported may be the database's
        logger.warning("could not look up the game in %s: %r", place, lookup_error)
        return None
