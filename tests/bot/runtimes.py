"""A runtime wired like the app's, from whatever fakes a test hands in.

``telesnap.app`` builds one :class:`~telesnap.bot.delivery.sender.Senders` per process
(every message the bot sends goes through its chat's sender): over the outbox, the
coordination, a pacer and a :class:`~telesnap.bot.delivery.show.HeadShow`; a 403 from
any send ends the chat's games (``runtime.bot_removed``). :func:`wired_runtime` builds
the same, over the bot, the outbox and the services a test gives it. The look-out
(:mod:`telesnap.bot.delivery.lookout`) is not built: a test that needs one makes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from telegram import Chat, Message

from telesnap.bot.delivery.live import RecentLines
from telesnap.bot.delivery.pace import FloodLimits, Pacer
from telesnap.bot.delivery.sender import Senders
from telesnap.bot.delivery.show import HeadShow
from telesnap.bot.handlers.runtime import Runtime
from telesnap.bot.ingress.gate import IntakeGate
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import RaceReferee
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.coordination import LocalCoordination
from telesnap.services.outbox.service import Line

SIGNER = CallbackSigner.for_token("123:secret")


@dataclass(frozen=True)
class Sent:
    """One message as Telegram took it."""

    chat_id: int
    text: str
    thread_id: int | None
    reply_to: int | None
    message_id: int


class ChatBot:
    """A Bot API that takes every message and edit, and records them in order.

    ``refuse`` maps a chat to the error every call to it raises (a 403, a 400...).
    """

    def __init__(self, refuse: Mapping[int, Exception] | None = None) -> None:
        self.sent: list[Sent] = []
        self.edits: list[tuple[int, int, str]] = []
        self.refuse: dict[int, Exception] = dict(refuse or {})
        self.calls = 0
        self._ids = itertools.count(100)

    def texts(self, chat_id: int) -> list[str]:
        """The texts of the messages sent to ``chat_id``, in order."""
        return [message.text for message in self.sent if message.chat_id == chat_id]

    def _check(self, chat_id: int) -> None:
        self.calls += 1
        if chat_id in self.refuse:
            raise self.refuse[chat_id]

    async def send_message(
        self,
        chat_id: int,
        text: str,
        *,
        message_thread_id: int | None = None,
        reply_to_message_id: int | None = None,
        **_: Any,
    ) -> Message:
        self._check(chat_id)
        message_id = next(self._ids)
        self.sent.append(Sent(chat_id, text, message_thread_id, reply_to_message_id, message_id))
        kind = Chat.SUPERGROUP if chat_id < 0 else Chat.PRIVATE
        return Message(message_id, datetime.now(UTC), Chat(chat_id, kind), text=text)

    async def edit_message_text(
        self, text: str, *, chat_id: int, message_id: int, **_: Any
    ) -> bool:
        self._check(chat_id)
        self.edits.append((chat_id, message_id, text))
        return True

    async def edit_message_reply_markup(self, *, chat_id: int, message_id: int, **_: Any) -> bool:
        self._check(chat_id)
        return True

    async def send_message_returning_id(
        self, chat_id: int, text: str, *, reply_markup: Any, message_thread_id: int | None
    ) -> int:
        """A board, as the application's bot sends it."""
        sent = await self.send_message(chat_id, text, message_thread_id=message_thread_id)
        return sent.message_id

    async def remove_inline_keyboard(self, chat_id: int, message_id: int) -> None:
        """The application's bot's way to bare a board."""
        await self.edit_message_reply_markup(chat_id=chat_id, message_id=message_id)


class NoRows:
    """An outbox with no rows: what the senders need when only direct posts are sent.

    It records the chats whose rows the senders set aside (a 403).
    """

    def __init__(self) -> None:
        self.gone: list[int] = []

    def on_rows(self, listener: Callable[[int], None]) -> None:
        """No unit of work commits rows here."""

    def on_shown_twice(self, listener: Callable[[int, int], None]) -> None:
        """No row is shown here, so none twice."""

    async def line(self, chat_id: int) -> Line:
        return Line([])

    async def has_pending(self, chat_id: int) -> bool:
        return False

    async def waiting(self, older_than: Any = None) -> list[int]:
        return []

    def forget(self, chat_id: int) -> None:
        """Nothing is kept."""

    async def chat_gone(self, chat_id: int) -> None:
        self.gone.append(chat_id)

    async def forget_settled(self, older_than: Any) -> int:
        return 0

    async def boards_shown(self, game_id: int, limit: int) -> list[Any]:
        return []

    async def bared(self, chat_id: int, message_id: int) -> None:
        """Nothing is noted."""

    async def write(self) -> None:
        """Nothing waits to be written."""


class GivenLanguages:
    """Each chat's language as the test gives it (the app's ChatLanguages reads the database)."""

    def __init__(self, languages: Mapping[int, str | None] | None = None) -> None:
        self._languages = dict(languages or {})

    def known(self, chat_id: int) -> tuple[bool, str | None]:
        return True, self._languages.get(chat_id)

    async def of(self, chat_id: int, app_language: str | None = None) -> str | None:
        return self._languages.get(chat_id) or app_language

    def forget(self, chat_id: int) -> None:
        self._languages.pop(chat_id, None)


@dataclass
class LanguagesOnly:
    """Settings a test does not use, but for the chats' languages they hold."""

    languages: Any


def wired_runtime(
    *,
    bot: Any = None,
    lobby: Any = None,
    play: Any = None,
    races: Any = None,
    settings: Any = None,
    outbox: Any = None,
    coordination: Any = None,
    limits: FloodLimits | None = None,
    notify: Any = None,
    signer: CallbackSigner = SIGNER,
) -> Runtime:
    """A runtime whose senders, referee and gate are built as ``telesnap.app`` builds them.

    ``bot``: a :class:`ChatBot` unless given; ``settings``: holds the chats' languages
    (:class:`GivenLanguages`, English, unless given); ``outbox``: :class:`NoRows` unless
    given (a real ``OutboxService`` for rows); ``coordination``: one process's;
    ``limits``: none (flood control off, as ``TELESNAP_FLOOD_CONTROL=0`` runs it).
    """
    bot = bot if bot is not None else ChatBot()
    settings = settings if settings is not None else LanguagesOnly(GivenLanguages())
    outbox = outbox if outbox is not None else NoRows()
    coordination = coordination if coordination is not None else LocalCoordination()
    book = ReceiptBook(signer)
    show = HeadShow(bot, outbox, signer, RecentLines(outbox.boards_shown))
    runtime: Runtime | None = None

    def bot_removed(chat_id: int) -> None:
        assert runtime is not None
        runtime.bot_removed(chat_id)

    senders = Senders(
        bot,
        outbox,
        coordination,
        Pacer(limits or FloodLimits(enabled=False), coordination),
        settings.languages,
        show,
        on_forbidden=bot_removed,
    )
    runtime = Runtime(
        bot=bot,
        lobby=lobby,
        play=play,
        races=races,
        settings=settings,
        book=book,
        signer=signer,
        senders=senders,
        referee=RaceReferee(bot, races, book, pledges=coordination),
        gate=IntakeGate(calls_in_flight=book.calls_on_their_way, waiting_from=book.waiting_from),
        notify=notify,
    )
    return runtime
