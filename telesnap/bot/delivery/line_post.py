"""The post that sends the next lobby or notice in a topic's line of unsent outbox rows.

A change writes its lobby or notice to the durable outbox
(:mod:`telesnap.services.outbox.rows`); a :class:`LinePost` reads the chat's
unsent rows when its turn to be sent comes and sends what is at the head of its
topic's rows, so a topic's rows go out in ``id`` order whichever worker wrote
them, a reminder never overtakes the board before it, and the topics of a forum
take their turns in the chat's lane instead of waiting behind each other. A
lobby at the head is shown as its newest row says (older rows of the game are
settled with it), in the game's one lobby message: posted when the game has none
yet, edited after that. When a board
is at the head, the post hands it to its game's board post and sends nothing.
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from telegram import Bot, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest

from ...services.outbox.rows import (
    Entry,
    LobbyEntry,
    NoticeEntry,
    OutboxEntry,
    line_head,
    topic_line,
)
from ...services.types import Place
from ..render.boards import lobby_keyboard, render_lobby
from ..render.callbacks import CallbackSigner
from ..render.i18n import directed
from ..render.notices import UnknownNoticeError, render_notice
from .lanes import Post

logger = logging.getLogger(__name__)

ReadLine = Callable[[int], Awaitable[list[Entry] | None]]
"""Reads a chat's unsent rows in order (None: another worker sends them now)."""
LineShown = Callable[["LinePost", int], Awaitable[None]]
"""Told which message shows the rows a line post sent."""
LineUnreadable = Callable[["LinePost", Exception], Awaitable[None]]
"""Told that the rows at the head cannot be shown (a notice of an unknown kind)."""
BoardAhead = Callable[[OutboxEntry], None]
"""Queues the board of the entry at the head of the line."""
Translations = Callable[[Place], gettext.NullTranslations]
"""The translations of a topic's language."""


@dataclass(eq=False)
class LinePost:
    """Sends the lobby or notice at the head of the chat's line; a waiting one takes newer ones.

    ``entry_ids`` are the rows the post sends (set when it is sent), and
    ``lobby_of`` the game whose lobby message it shows, if it shows one.
    """

    chat_id: int
    thread_id: int
    """The topic whose line this post sends (each topic of a forum is a line of its own)."""
    read: ReadLine
    signer: CallbackSigner
    translations: Translations
    on_shown: LineShown
    on_unreadable: LineUnreadable
    board_ahead: BoardAhead
    entry_ids: list[int] = field(default_factory=list)
    lobby_of: int | None = None
    key: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.key = f"line:{self.chat_id}:{self.thread_id}"

    async def send(self, bot: Bot) -> int | None:
        """Send the head of the line (None: nothing of ours to send); then report it shown."""
        self.entry_ids, self.lobby_of = [], None
        entries = await self.read(self.chat_id)
        head = line_head(topic_line(entries or (), self.thread_id))
        if not head:
            return None
        first = head[0]
        if isinstance(first, OutboxEntry):
            self.board_ahead(first)
            return None
        self.entry_ids = [entry.id for entry in head]
        tr = self.translations(Place(chat_id=first.chat_id, thread_id=first.thread_id))
        if isinstance(first, NoticeEntry):
            try:
                text = directed(render_notice(first.notice, tr), tr)
            except UnknownNoticeError as error:
                logger.exception("chat %s: outbox row %s cannot be shown", self.chat_id, first.id)
                await self.on_unreadable(self, error)
                return None
            message_id = await self._post(bot, first.thread_id, text, None, first.reply_to)
        else:
            newest = head[-1]
            assert isinstance(newest, LobbyEntry)
            self.lobby_of = newest.game_id
            text = render_lobby(newest.lobby, tr)
            keyboard = lobby_keyboard(newest.lobby, self.signer, tr)
            message_id = await self._show_lobby(bot, newest, text, keyboard)
        try:
            await self.on_shown(self, message_id)
        except Exception:
            # The message is out: sending it again would show it twice.
            logger.exception(
                "chat %s: noting rows %s as sent (message %s) failed",
                self.chat_id,
                self.entry_ids,
                message_id,
            )
        return message_id

    async def _show_lobby(
        self, bot: Bot, entry: LobbyEntry, text: str, keyboard: InlineKeyboardMarkup | None
    ) -> int:
        """Edit the game's lobby message (an identical edit counts); post one if there is none."""
        if entry.message_id is not None:
            try:
                await bot.edit_message_text(
                    text,
                    chat_id=self.chat_id,
                    message_id=entry.message_id,
                    parse_mode=ParseMode.HTML,
                    reply_markup=keyboard,
                )
                return entry.message_id
            except BadRequest as error:
                reason = str(error).lower()
                if "not modified" in reason:
                    return entry.message_id
                if "not found" not in reason:
                    raise
                # Deleted in the chat: the lobby gets a new message.
                logger.warning(
                    "chat %s: lobby message %s of game %s is gone; posting it again",
                    self.chat_id,
                    entry.message_id,
                    entry.game_id,
                )
        return await self._post(bot, entry.thread_id, text, keyboard, None)

    async def _post(
        self,
        bot: Bot,
        thread_id: int,
        text: str,
        keyboard: InlineKeyboardMarkup | None,
        reply_to: int | None,
    ) -> int:
        message = await bot.send_message(
            self.chat_id,
            text,
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard,
            message_thread_id=thread_id or None,
            reply_to_message_id=reply_to,
            allow_sending_without_reply=True,
        )
        return message.message_id

    def absorb(self, newer: Post) -> bool:
        """A waiting line post reads the whole line when it goes: a newer one adds nothing."""
        return isinstance(newer, LinePost) and newer.thread_id == self.thread_id
