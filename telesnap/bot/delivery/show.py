"""Showing the head of a chat's line: a board, a lobby or a notice, rendered at send time.

The rows say *what* to show; this module says *how*, in the chat's language. A table older
than one of the game already on screen is never shown (its rows are settled unshown), and only
a game's newest board keeps its buttons: the one before is named for them to come off next.
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import BadRequest

from ...services.outbox.rows import BoardEntry, Entry, LobbyEntry, NoticeEntry
from ...services.outbox.service import Line, OutboxService, Shown, ShownBoard
from ..render.boards import board_keyboard, compose_board
from ..render.callbacks import CallbackSigner
from ..render.digest import BoardEvent, board_lines, fits_together
from ..render.i18n import directed
from ..render.lobby import lobby_keyboard, render_lobby
from ..render.notices import render_notice
from .direct import EditPost, QuickSender, TextPost
from .failures import is_gone, is_unchanged
from .live import LIVE, RecentLines, edit_in_place, entry_events, kept_earlier

logger = logging.getLogger(__name__)


class HeadNotShownError(Exception):
    """Showing a head failed: the rows the message would have shown, and why."""

    def __init__(self, entry_ids: Sequence[int], error: Exception) -> None:
        super().__init__(f"rows {list(entry_ids)} not shown: {error!r}")
        self.entry_ids = list(entry_ids)
        self.error = error
        """Telegram's answer, or a fault of our own."""


@dataclass(frozen=True, slots=True)
class Showing:
    """What one send showed, and the board whose buttons come off next (if any)."""

    shown: Shown
    bare: int | None = None


@dataclass(eq=False)
class HeadShow:
    """Renders and sends the head of a chat's line (see the module)."""

    bot: Bot
    outbox: OutboxService
    signer: CallbackSigner
    recent: RecentLines
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    """When a board was shown: reaction times and turn timers start there."""

    async def show(
        self, head: Sequence[Entry], line: Line, tr: gettext.NullTranslations
    ) -> Showing:
        """Show ``head`` (one of :func:`~telesnap.services.outbox.rows.next_head`'s runs).

        Raises :class:`HeadNotShownError` naming the rows it tried, and why.
        """
        try:
            return await self._show(head, line, tr)
        except HeadNotShownError:
            raise
        except Exception as error:
            raise HeadNotShownError([entry.id for entry in head], error) from error

    async def _show(
        self, head: Sequence[Entry], line: Line, tr: gettext.NullTranslations
    ) -> Showing:
        first = head[0]
        if isinstance(first, BoardEntry):
            boards = [entry for entry in head if isinstance(entry, BoardEntry)]
            return await self._boards(boards, line.shown.get(first.game_id), tr)
        if isinstance(first, LobbyEntry):
            newest = head[-1]
            assert isinstance(newest, LobbyEntry)
            return Showing(await self._lobby(newest, [entry.id for entry in head], tr))
        assert isinstance(first, NoticeEntry)
        text = directed(render_notice(first.notice, tr), tr)
        notice = TextPost(first.chat_id, first.thread_id, text, reply_to=first.reply_to)
        message = await notice.send(self.bot)
        return Showing(Shown(first.chat_id, (first.id,), message.message_id))

    async def _boards(
        self, run: Sequence[BoardEntry], before: ShownBoard | None, tr: gettext.NullTranslations
    ) -> Showing:
        first = run[0]
        events: list[BoardEvent] = []
        taken: list[BoardEntry] = []
        for entry in run:
            more = entry_events(entry, tr, game_ends=run[-1].board.table.is_over)
            if taken and not fits_together([*events, *more], entry.board.table, tr):
                break  # the rest goes in the next message
            events += more
            taken.append(entry)
        ids = tuple(entry.id for entry in taken)
        table = taken[-1].board.table
        if before is not None and table.board_version < before.version:
            return Showing(Shown(first.chat_id, ids, None))  # a newer board is on screen
        lines = board_lines(events, table, tr)
        live = table.board_style == LIVE
        earlier: list[str] = []
        if live:
            shown_before = await self.recent.earlier(
                table.game_id, before.version if before else None, tr
            )
            earlier = kept_earlier(shown_before, lines)
        text = compose_board(lines, table, tr, earlier=earlier)
        keyboard = board_keyboard(table, self.signer, tr)
        message_id = None
        try:
            if live and before is not None:
                message_id = await edit_in_place(
                    self.bot, first.chat_id, before.message_id, text, keyboard
                )
            if message_id is None:
                message_id = await self._post_board(first.chat_id, first.thread_id, text, keyboard)
        except Exception as error:
            raise HeadNotShownError(ids, error) from error  # the rows behind wait for the next
        if live:
            self.recent.shown(
                table.game_id,
                [*earlier, *lines],
                version=table.board_version,
                is_over=table.is_over,
            )
        board = ShownBoard(table.game_id, table.board_version, message_id, self.clock())
        bare = None
        if before is not None and before.message_id != message_id:
            bare = before.message_id
        return Showing(Shown(first.chat_id, ids, message_id, board=board), bare)

    async def _lobby(
        self, entry: LobbyEntry, ids: list[int], tr: gettext.NullTranslations
    ) -> Shown:
        text = render_lobby(entry.lobby, tr)
        keyboard = lobby_keyboard(entry.lobby, self.signer, tr)
        message_id = await self.outbox.lobby_message(entry.game_id)
        if message_id is not None and not await self._edit_lobby(entry, message_id, text, keyboard):
            message_id = None
        if message_id is None:
            lobby = TextPost(entry.chat_id, entry.thread_id, text, keyboard)
            message_id = (await lobby.send(self.bot)).message_id
        return Shown(entry.chat_id, tuple(ids), message_id, lobby_of=entry.game_id)

    async def _edit_lobby(
        self, entry: LobbyEntry, message_id: int, text: str, keyboard: InlineKeyboardMarkup | None
    ) -> bool:
        """Edit the game's lobby message (an identical edit counts); False: it is gone."""
        try:
            await EditPost(entry.chat_id, message_id, text, keyboard).send(self.bot)
        except BadRequest as error:
            if is_unchanged(error):
                return True
            if not is_gone(error):
                raise
            logger.warning(
                "chat %s: lobby message %s of game %s is gone; posting it again",
                entry.chat_id,
                message_id,
                entry.game_id,
            )
            return False
        return True

    async def _post_board(
        self, chat_id: int, thread_id: int, text: str, keyboard: InlineKeyboardMarkup | None
    ) -> int:
        return await cast(QuickSender, self.bot).send_message_returning_id(
            chat_id, text, reply_markup=keyboard, message_thread_id=thread_id or None
        )
