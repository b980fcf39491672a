"""A live board: one message per game, edited in place, holding the last few events.

Each board edits the message of the game's newest board shown (stored, so any worker finds
it), and its rows are marked sent only once Telegram has taken the edit: a crash loses nothing.
The last lines shown stay above the new ones, so a player who looks away still sees what just
happened; after a restart or on another worker they are rendered again from the outbox.
"""

from __future__ import annotations

import gettext
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import BadRequest

from ...services.outbox.rows import BoardEntry, NoticeKind
from ...support.bounded import BoundedDict
from ..render.digest import BoardEvent, board_events, board_lines
from ..render.notices import UnknownNoticeError, render_notice
from .direct import EditPost
from .failures import is_unchanged

logger = logging.getLogger(__name__)

LIVE = "live"
"""The board style of a game shown in one message, edited in place."""
LIVE_EVENTS = 6
"""How many event lines a live board holds at least (all of an edit's own, if more)."""
GAMES_KEPT = 1000
"""How many games' last lines are kept (the games shown least lately are read back)."""

ShownBoards = Callable[[int, int], Awaitable[Sequence[BoardEntry]]]
"""Reads a game's last boards marked sent: ``(game_id, how_many)``, oldest first."""


def entry_events(
    entry: BoardEntry, tr: gettext.NullTranslations, *, game_ends: bool = False
) -> list[BoardEvent]:
    """The lines a board row shows: its notes (why a timer acted), then its events.

    ``game_ends``: the message ends the game, so "I am back: the game goes on" is not said.
    """
    events = []
    for note in entry.notes:
        if game_ends and note.kind == NoticeKind.RESUMED:
            continue
        try:
            events.append(BoardEvent(render_notice(note, tr)))
        except UnknownNoticeError:
            # The board itself reads: it goes out without the note it cannot render.
            logger.exception(
                "chat %s, game %s: a note of outbox row %s left out",
                entry.chat_id,
                entry.game_id,
                entry.id,
            )
    return events + board_events(entry.board.operations, entry.board.table, tr)


def kept_earlier(earlier: Sequence[str], lines: Sequence[str]) -> list[str]:
    """The last ``earlier`` lines that :data:`LIVE_EVENTS` leaves room for above ``lines``."""
    room = max(0, LIVE_EVENTS - len(lines))
    return list(earlier[-room:]) if room else []


@dataclass(frozen=True, slots=True)
class _Shown:
    version: int
    lines: tuple[str, ...]


@dataclass(eq=False)
class RecentLines:
    """The last event lines each live board showed, to show again above the next ones."""

    shown_boards: ShownBoards | None = None
    """Where they are read back from when the process does not know them (None: nowhere)."""
    games_kept: int = GAMES_KEPT
    _lines: BoundedDict[int, _Shown] = field(init=False)

    def __post_init__(self) -> None:
        self._lines = BoundedDict(self.games_kept)

    async def earlier(
        self, game_id: int, shown_version: int | None, tr: gettext.NullTranslations
    ) -> list[str]:
        """The last lines the live board of ``game_id`` shows, at board ``shown_version``.

        Lines kept for another version (a restart, another worker) are read back.
        """
        if shown_version is None:
            return []
        kept = self._lines.get(game_id)
        if kept is not None and kept.version == shown_version:
            return list(kept.lines)
        if self.shown_boards is None:
            return []
        try:
            entries = await self.shown_boards(game_id, LIVE_EVENTS)
        except Exception:
            # The board goes out all the same, with its own events only.
            logger.exception("game %s: the live board's last lines could not be read", game_id)
            return []
        lines: list[str] = []
        for entry in entries:
            lines += board_lines(entry_events(entry, tr), entry.board.table, tr)
        return lines[-LIVE_EVENTS:]

    def shown(self, game_id: int, lines: Sequence[str], *, version: int, is_over: bool) -> None:
        """The live board of ``game_id`` now shows board ``version`` with ``lines``."""
        if is_over:
            self._lines.pop(game_id, None)
        else:
            self._lines[game_id] = _Shown(version, tuple(lines[-LIVE_EVENTS:]))


async def edit_in_place(
    bot: Bot, chat_id: int, message_id: int, text: str, keyboard: InlineKeyboardMarkup | None
) -> int | None:
    """Show the board in the live board's message; None: it can no longer be edited.

    An edit that changes nothing (the same table shown again) counts as shown.
    """
    try:
        await EditPost(chat_id, message_id, text, keyboard).send(bot)
    except BadRequest as error:
        if is_unchanged(error):
            return message_id
        logger.warning(
            "chat %s: live board %s cannot be edited (%s); posting a new one",
            chat_id,
            message_id,
            error,
        )
        return None
    return message_id
