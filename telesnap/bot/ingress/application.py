"""The python-telegram-bot Application: the stamping bot and the handlers.

Updates reach the handlers through the inbox (:mod:`.dispatcher`), not through
python-telegram-bot's own update queue.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardMarkup, Update
from telegram.constants import ParseMode
from telegram.error import InvalidToken, RetryAfter, TimedOut
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ChatMemberHandler,
    ExtBot,
    MessageHandler,
    TypeHandler,
    Updater,
    filters,
)

from ...support.retry import Backoff, FailureRun, short_cause
from ..handlers.buttons import button_handlers, on_unknown_button
from ..handlers.commands import command_handlers, forget_receipt, on_unknown_command
from ..handlers.errors import on_error
from ..handlers.membership import on_my_chat_member
from ..handlers.privacy import register_privacy_handlers
from ..handlers.stats import register_stats_handlers
from ..render.toasts import AnsweredPresses
from .api_errors import REVOKED_TOKEN_TRACEBACK, log_polling_error
from .redaction import install_token_redaction
from .relevance import bot_username, wanted
from .transport import AiohttpRequest

if TYPE_CHECKING:
    from .intake import Intake

BotApplication = Application[Any, Any, Any, Any, Any, Any]
logger = logging.getLogger(__name__)


LONG_POLL_S = 10
"""How long a ``getUpdates`` waits at the Bot API for updates to come."""
POLL_GIVEN_UP_S = 5.0
"""How long past :data:`LONG_POLL_S` a poll is waited for (python-telegram-bot adds the two): a
connection gone dead mid-poll is dropped this soon, and the poll asked again."""


class UpdatesNotStoredError(TimedOut):
    """A batch of updates could not be stored; the same offset asks for it again.

    A :class:`~telegram.error.TimedOut` (a network error), so python-telegram-bot's polling loop
    asks again at once and quietly: the failure is logged, and the pause taken, where it
    happened. Any other exception it would log as data lost, which it is not.
    """


class StampingBot(ExtBot[None]):
    """A bot that stamps and stores every batch of updates the moment ``getUpdates`` returns it."""

    def __init__(self, token: str, api_url: str) -> None:
        install_token_redaction(token)  # before python-telegram-bot logs its URL at DEBUG
        logging.getLogger("telegram.ext").addFilter(REVOKED_TOKEN_TRACEBACK)
        transports = (
            AiohttpRequest(connection_pool_size=64),
            AiohttpRequest(connection_pool_size=2, read_timeout=POLL_GIVEN_UP_S),
        )
        super().__init__(
            token,
            base_url=f"{api_url}/bot",
            base_file_url=f"{api_url}/file/bot",
            request=transports[0],
            get_updates_request=transports[1],
        )
        with self._unfrozen():
            self.transports = transports
            self.answered_presses = AnsweredPresses()
            self.intake: Intake | None = None
            """Where fetched updates are stored (set by the wiring)."""
            self.store_backoff = Backoff(FIRST_STORE_BACKOFF_S, MAX_STORE_BACKOFF_S)
            self.store_failures = FailureRun(logger, "storing updates")
            self.token_revoked = asyncio.Event()
            """Set once the Bot API answers 401 while the bot runs: the runner stops on it."""
            self.revocation: InvalidToken | None = None
            """That first 401."""
            self._fetched: list[dict[str, Any]] | None = None
            """The JSON of the batch ``getUpdates`` returned last, as the Bot API sent it."""

    def store_into(self, intake: Intake) -> None:
        """Store every batch ``getUpdates`` returns through ``intake`` (before it is confirmed)."""
        with self._unfrozen():
            self.intake = intake

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

        Boards are the hot path: a full ``Message`` costs more than all else the bot does with it.
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

    async def remove_inline_keyboard(self, chat_id: int, message_id: int) -> None:
        """Take a message's buttons off; the edited message Telegram returns is not parsed.

        Every new board bares the one before, so this is as hot as sending boards.
        """
        await self._post("editMessageReplyMarkup", {"chat_id": chat_id, "message_id": message_id})

    async def close_transports(self) -> None:
        """Close both connection pools (also when the bot never finished starting)."""
        for transport in self.transports:
            await transport.shutdown()

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        """Fetch updates, then stamp and store them before anything else can delay them.

        They are confirmed (by the next ``getUpdates``) only once committed in the inbox; if storing
        fails this raises :class:`UpdatesNotStoredError` after a growing pause, and the same
        offset brings them back.
        """
        try:
            updates = await super().get_updates(*args, **kwargs)
        except (TimedOut, RetryAfter) as error:  # python-telegram-bot's loop retries these silently
            log_polling_error(error)
            raise
        if not updates:
            return updates
        if self.intake is None:
            raise RuntimeError("the bot has no inbox to store its updates in")
        username = bot_username(self)
        payloads = self._payloads_of(updates)
        kept = [(u, p) for u, p in zip(updates, payloads, strict=True) if wanted(p, username)]
        if not kept:
            return updates  # confirmed by the next getUpdates, never stored: see .relevance
        try:
            await self.intake.receive([u for u, _ in kept], [p for _, p in kept])
        except Exception as error:
            oldest, newest = updates[0].update_id, updates[-1].update_id
            delay = self.store_backoff.next()
            self.store_failures.failed(
                error,
                "could not store updates %d to %d (%s); asking for them again in %.1f s",
                oldest,
                newest,
                short_cause(error),
                delay,
            )
            await asyncio.sleep(delay)
            raise UpdatesNotStoredError(f"updates {oldest} to {newest} were not stored") from error
        self.store_backoff.reset()
        self.store_failures.succeeded()
        return updates

    async def _post(self, endpoint: str, *args: Any, **kwargs: Any) -> Any:
        """Every Bot API call; keeps the JSON of a ``getUpdates`` batch for :meth:`get_updates`.

        A private seam of python-telegram-bot (tests/bot/test_polling_store.py checks it):
        rebuilding the JSON from the parsed updates would cost most of what parsing them does.
        """
        try:
            result = await super()._post(endpoint, *args, **kwargs)
        except InvalidToken as error:
            # A 401 is the token refused (revoked): nothing the bot asks will work again. A 404
            # is python-telegram-bot's InvalidToken too: a method this server lacks.
            if self.revocation is None and error.message.lower().startswith("unauthorized"):
                with self._unfrozen():
                    self.revocation = error
                self.token_revoked.set()
            raise
        if endpoint == "getUpdates":
            self._fetched = result
        return result

    def _payloads_of(self, updates: tuple[Update, ...]) -> list[dict[str, Any]]:
        """Each update's JSON as it came (rebuilt from the update where it was not kept)."""
        fetched, self._fetched = self._fetched, None
        if fetched is not None and [item.get("update_id") for item in fetched] == [
            update.update_id for update in updates
        ]:
            return fetched
        return [update.to_dict() for update in updates]


FIRST_STORE_BACKOFF_S = 0.5
MAX_STORE_BACKOFF_S = 5.0


class HandedToInbox(asyncio.Queue[object]):
    """The update queue: it drops the updates it is given, since the inbox has them already.

    python-telegram-bot's own queue would hand them over a second time, unordered; anything else
    (its stop signal) goes through.
    """

    async def put(self, item: object) -> None:
        """Drop an update (it is stored in the inbox); queue anything else."""
        if not isinstance(item, Update):
            await super().put(item)

    def put_nowait(self, item: object) -> None:
        """Drop an update (it is stored in the inbox); queue anything else."""
        if not isinstance(item, Update):
            super().put_nowait(item)


def build_application(token: str, api_url: str) -> BotApplication:
    """The Application with every handler registered, talking to ``api_url``."""
    bot = StampingBot(token, api_url)
    application = ApplicationBuilder().updater(Updater(bot, HandedToInbox())).build()
    register_stats_handlers(application)
    register_privacy_handlers(application)
    application.add_handlers([*command_handlers(), *button_handlers()])
    application.add_handler(CallbackQueryHandler(on_unknown_button))
    application.add_handler(
        MessageHandler(filters.COMMAND & filters.UpdateType.MESSAGE, on_unknown_command)
    )
    application.add_handler(ChatMemberHandler(on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER))
    # Runs after the handlers above, for every update: drop its receipt whatever happened.
    application.add_handler(TypeHandler(Update, forget_receipt), group=1)
    application.add_error_handler(on_error)
    return application
