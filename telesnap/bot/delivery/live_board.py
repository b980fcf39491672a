"""A live board: one message per game, edited in place, holding the last few events.

In the ``live`` board style (a chat setting, taken by each game at its start)
a game's boards do not post a message each: the first one does, and every later
one edits that message (the newest board shown, as stored with its board
view, so any worker finds it). The edit still reads the game's durable outbox
rows when its turn in the pace comes, and they are marked sent only once
Telegram has taken it: a crash loses nothing.

The message holds every event since the previous edit (summarised if there are
many), after the last lines the game showed before, up to :data:`LIVE_EVENTS`
lines in all, so a player who looks away for a moment still sees what just
happened. Those earlier lines are kept in the process (:class:`RecentLines`):
after a restart, or on another worker, the message starts again from the
events it shows first. A message that can no longer be edited (deleted, too
old) is replaced by a new one.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from telegram import Bot, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest

from ...support.bounded import BoundedDict

logger = logging.getLogger(__name__)

LIVE = "live"
"""The board style of a game shown in one message, edited in place."""
LIVE_EVENTS = 6
"""How many event lines a live board holds at least (all of an edit's own, if more)."""
GAMES_KEPT = 1000
"""How many games' last lines are kept (the games shown least lately are forgotten)."""


@dataclass(eq=False)
class RecentLines:
    """The last event lines each live board showed, to show again above the next ones."""

    games_kept: int = GAMES_KEPT
    _lines: BoundedDict[int, deque[str]] = field(init=False)

    def __post_init__(self) -> None:
        self._lines = BoundedDict(self.games_kept)

    def with_earlier(self, game_id: int, lines: Sequence[str]) -> list[str]:
        """``lines`` (the new events), after as many earlier ones as :data:`LIVE_EVENTS` leaves."""
        room = max(0, LIVE_EVENTS - len(lines))
        earlier = list(self._lines.get(game_id, ()))
        return [*(earlier[-room:] if room else []), *lines]

    def shown(self, game_id: int, lines: Sequence[str], *, is_over: bool) -> None:
        """The live board of ``game_id`` now shows ``lines`` (its newest events last)."""
        if is_over:
            self._lines.pop(game_id, None)
            return
        kept = self._lines.pop(game_id, None) or deque(maxlen=LIVE_EVENTS)
        kept.extend(lines)
        self._lines[game_id] = kept


async def edit_in_place(
    bot: Bot, chat_id: int, message_id: int, text: str, keyboard: InlineKeyboardMarkup | None
) -> int | None:
    """Show the board in the live board's message; None: it can no longer be edited.

    An edit that changes nothing (the same table shown again) counts as shown.
    """
    try:
        await bot.edit_message_text(
            text,
            chat_id=chat_id,
            message_id=message_id,
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard,
        )
    except BadRequest as error:
        if "not modified" in str(error).lower():
            return message_id
        logger.warning(
            "chat %s: live board %s cannot be edited (%s); posting a new one",
            chat_id,
            message_id,
            error,
        )
        return None
    return message_id
