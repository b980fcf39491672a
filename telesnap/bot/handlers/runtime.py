"""What the handlers share: the services, the chats' senders, the languages and the referee."""

from __future__ import annotations

import functools
import gettext
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from telegram import Bot, InlineKeyboardMarkup, Update
from telegram.ext import Application, ContextTypes

from ...services.chat_settings import SettingsService
from ...services.notify import NotifyService
from ...services.play.lobby import LobbyService
from ...services.play.races import RaceService
from ...services.play.service import PlayService
from ...services.types import Place
from ...support.tasks import TaskSet
from ..delivery.direct import EditPost, Post, TextPost, UploadPost
from ..delivery.sender import Senders
from ..ingress.gate import IntakeGate
from ..ingress.receipts import ReceiptBook
from ..referee.races import RaceReferee
from ..render.callbacks import CallbackSigner
from ..render.i18n import directed, language_of, translator
from ..render.toasts import answer_toast

if TYPE_CHECKING:
    from .privacy import PrivacyBot
    from .stats import StatsBot

logger = logging.getLogger(__name__)

RUNTIME_KEY = "telesnap"

Context = ContextTypes.DEFAULT_TYPE
UpdateHandler = Callable[[Update, Context], Coroutine[Any, Any, None]]


@dataclass(eq=False)
class Runtime:
    """The bot's shared state, kept in ``application.bot_data`` (built by ``telesnap.app``)."""

    bot: Bot
    lobby: LobbyService
    play: PlayService
    races: RaceService
    settings: SettingsService
    book: ReceiptBook
    signer: CallbackSigner
    senders: Senders
    referee: RaceReferee
    gate: IntakeGate = field(default_factory=IntakeGate)
    """The intake's budgets; the handlers ask it whether a refusal may be answered."""
    notify: NotifyService | None = None
    """Who hears of new lobbies privately (``/notify``)."""
    jobs: TaskSet = field(default_factory=TaskSet)
    """Background jobs (ending a removed chat's games, say)."""
    stats: StatsBot | None = None
    """What ``/stats`` and the other stats commands read."""
    privacy: PrivacyBot | None = None
    """What ``/forgetme`` and ``/forgetchat`` erase with."""

    # -- what the handlers say directly ---------------------------------------------------

    async def language(self, place: Place, sender_language: str | None = None) -> str:
        """The language the chat's messages are written in (read once, then kept).

        A chat with none yet answers its sender in theirs (``sender_language``).
        """
        return language_of(await self.settings.languages.of(place.chat_id, sender_language))

    def translations(
        self, place: Place, sender_language: str | None = None
    ) -> gettext.NullTranslations:
        """The chat's translations, as last read (the sender's, or the default, before that)."""
        known = self.settings.languages.known(place.chat_id)[1]
        return translator(language_of(known or sender_language))

    def say(
        self,
        place: Place,
        text: str,
        reply_to: int | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
        *,
        written_in: gettext.NullTranslations,
    ) -> None:
        """Post a message in the topic, set in the direction of the language it is written in.

        ``written_in``: the translations that wrote ``text``; they differ from the chat's when a
        chat with no language yet answers someone in theirs.
        """
        text = directed(text, written_in)
        self.send(TextPost(place.chat_id, place.thread_id, text, reply_markup, reply_to=reply_to))

    def edit(
        self,
        place: Place,
        message_id: int,
        text: str,
        reply_markup: InlineKeyboardMarkup | None = None,
        *,
        written_in: gettext.NullTranslations,
    ) -> None:
        """Give a message new text, set in the direction of its language (as :meth:`say`)."""
        text = directed(text, written_in)
        self.send(EditPost(place.chat_id, message_id, text, reply_markup))

    def upload(
        self,
        place: Place,
        kind: Literal["photo", "animation", "document"],
        data: bytes,
        file_name: str,
        caption: str,
        reply_to: int | None,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> None:
        """Post a file in the topic, with ``caption`` as given (an :class:`Answerer` directs it)."""
        post = UploadPost(
            kind, place.chat_id, place.thread_id, data, file_name, caption, reply_markup, reply_to
        )
        self.send(post)

    async def answering(
        self, place: Place, user_id: int, language_code: str | None, reply_to: int | None
    ) -> Answerer:
        """Direct answers to this person here, in the chat's language (theirs if it has none)."""
        tr = translator(await self.language(place, language_code))
        return Answerer(self, place, user_id, tr, reply_to)

    def send(self, post: Post) -> None:
        """Post directly, in the chat's pace (nothing goes to a chat that removed the bot)."""
        self.senders.post(post)

    # -- a chat that removed the bot ------------------------------------------------------

    def bot_removed(self, chat_id: int) -> None:
        """A send to the chat was refused (403): end its games in the background, post nothing.

        Nobody waits on a send, so a failure only logs; the next 403 tries again.
        """
        self.senders.close_chat(chat_id)
        if chat_id > 0 and self.notify is not None:  # a person blocked the bot
            self.jobs.spawn(self.notify.private_chat_closed(chat_id))
            return
        logger.info("chat %s: the bot was removed; ending its games there", chat_id)
        self.jobs.spawn(self._end_games_in(chat_id))

    async def removed_from(self, chat_id: int) -> None:
        """The ``my_chat_member`` update says the bot was removed: end its games, post nothing.

        The games end before the update is marked handled, so a kill in between runs it
        again; a failure goes up to the error handler (the database's is run again).
        """
        self.senders.close_chat(chat_id)
        if chat_id > 0 and self.notify is not None:  # a person blocked the bot
            await self.notify.private_chat_closed(chat_id)
            return
        ended = await self.lobby.end_in_removed_chat(chat_id)
        if ended:
            logger.info("chat %s: the bot was removed; ended game(s) %s", chat_id, ended)

    def bot_added(self, chat_id: int) -> None:
        """The bot is a member of the chat again (a person unblocked it): it may post there."""
        self.senders.open_chat(chat_id)
        if chat_id > 0 and self.notify is not None:
            self.jobs.spawn(self.notify.private_chat_opened(chat_id))

    async def _end_games_in(self, chat_id: int) -> None:
        try:
            ended = await self.lobby.end_in_removed_chat(chat_id)
        except Exception:
            # Forgotten, so that the next 403 or removal tries again.
            self.senders.open_chat(chat_id)
            logger.exception("chat %s: ending the games after the bot was removed failed", chat_id)
            return
        if ended:
            logger.info("chat %s: ended game(s) %s", chat_id, ", ".join(map(str, ended)))

    async def settle(self) -> None:
        """Wait until the background jobs and the chats' senders have done what they hold.

        Each may start work for the other (a 403 starts a job, a job's change wakes a
        sender): both are asked again until neither had anything left.
        """
        while True:
            await self.jobs.settle()
            if not self.senders.busy_chats:
                return
            await self.senders.flush()

    async def close(self) -> None:
        """Stop the referee, let the senders send what they hold (briefly), then stop."""
        await self.referee.close()
        await self.senders.close()
        await self.jobs.close()


def runtime_of(context: Context) -> Runtime:
    """The runtime stored in the application."""
    runtime = context.bot_data[RUNTIME_KEY]
    assert isinstance(runtime, Runtime)
    return runtime


def install(application: Application[Any, Any, Any, Any, Any, Any], runtime: Runtime) -> None:
    """Store the runtime in the application."""
    application.bot_data[RUNTIME_KEY] = runtime


async def refuse_press(update: Update, runtime: Runtime, text: str) -> None:
    """Answer a press refused for what it is (forged, foreign, not its presser's to press).

    It counts against its sender's refusals, as a refused command does: one tapping it for
    ever is turned away at the gate (see ``ingress/gate.py``).
    """
    query = update.callback_query
    assert query is not None
    if update.effective_chat is not None:
        runtime.gate.refused(update.effective_chat.id, query.from_user.id)
    received_ns = runtime.book.arrival_for(update).receipt.stamp_ns  # retries stop in time
    await answer_toast(runtime.bot, query.id, text, received_ns=received_ns)


def finishing(handler: UpdateHandler) -> UpdateHandler:
    """``handler``, with its update's receipt dropped as soon as it ends, whatever it did.

    A Snap call it registered then stops holding its race at once, not only after the
    error handler and the last handler group (``forget_receipt``).
    """

    @functools.wraps(handler)
    async def handle(update: Update, context: Context) -> None:
        try:
            await handler(update, context)
        finally:
            runtime_of(context).book.finished(update)

    return handle


@dataclass(frozen=True, slots=True)
class Answerer:
    """Answers to one person in one topic that change nothing (a refusal, /help, /stats…).

    Written in ``tr`` and set in its direction. Each takes one of the answers the gate leaves
    the person and the chat (:meth:`IntakeGate.may_reply`), so a flood of commands costs the
    chat a handful of messages; what changes a game goes through the outbox and is always shown.
    """

    runtime: Runtime
    place: Place
    user_id: int
    tr: gettext.NullTranslations
    reply_to: int | None
    """The message answered (quoted unless an answer says otherwise)."""

    def say(
        self,
        text: str,
        reply_markup: InlineKeyboardMarkup | None = None,
        *,
        quoting: bool = True,
    ) -> bool:
        """Post ``text``; whether the gate let it go."""
        if not self.runtime.gate.may_reply(self.place.chat_id, self.user_id):
            return False
        reply_to = self.reply_to if quoting else None
        self.runtime.say(self.place, text, reply_to, reply_markup, written_in=self.tr)
        return True

    def upload(
        self,
        kind: Literal["photo", "animation", "document"],
        data: bytes,
        file_name: str,
        caption: str,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> bool:
        """Post a file, its caption set in the direction of ``tr``; whether the gate let it go.

        A caption cut to Telegram's limit is cut after it was directed (directing it again
        changes nothing), so the marks count towards the limit.
        """
        if not self.runtime.gate.may_reply(self.place.chat_id, self.user_id):
            return False
        caption = directed(caption, self.tr)
        self.runtime.upload(self.place, kind, data, file_name, caption, self.reply_to, reply_markup)
        return True
