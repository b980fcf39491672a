"""A tidy chat: boards whose turn has passed lose their buttons, when it costs nothing.

Every flip leaves a board in the chat. Once a board is two boards old, its
Flip can only answer "This is an old message" and its Snap! is no better than
the newest board's, so the bot takes its buttons off. The board just before
the newest keeps them: a player may not have the newest yet, or may press the
one they see while the next is on its way. When the game ends, every board of
the game loses its buttons.

A running game is tidied once it goes quiet: when :data:`QUIET_S` pass without
a new board of it, its old boards lose their buttons all at once. A game that
shows a board every second or two is left alone while it plays (each edit is
an API call, and it would compete with the presses of every chat), and
tidied when it pauses or ends.

The removals are spare posts, queued through the courier (never to a chat that
removed the bot): they go out only when the chat has
nothing else to send and a full burst at hand, so they never delay a board,
and they count in the flood windows like any edit. After a restart, boards
shown before it keep theirs (their presses still get a clear answer).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from .courier import Courier
from .posts import KeyboardRemovalPost

KEEP_LIVE = 2
"""Boards of a running game that keep their buttons: the newest and the one before."""
QUIET_S = 1.5
"""How long a running game shows no new board before its old boards are tidied."""


@dataclass(eq=False)
class _LiveBoards:
    """One running game's boards that still have buttons, and its pending tidy-up."""

    chat_id: int
    message_ids: deque[int] = field(default_factory=deque)
    tidy_later: asyncio.TimerHandle | None = None


@dataclass(eq=False)
class BoardTidier:
    """Remembers each running game's boards that still have buttons, and tidies them."""

    courier: Courier
    quiet_s: float = QUIET_S
    """How long a game shows no new board before it is tidied (see :data:`QUIET_S`)."""
    _live: dict[int, _LiveBoards] = field(default_factory=dict)

    def board_shown(self, chat_id: int, game_id: int, message_id: int, *, is_over: bool) -> None:
        """A board of ``game_id`` went out as ``message_id``; older ones may lose their buttons.

        The last board of a game has no buttons, and every earlier one loses them now;
        while the game runs, they lose them once it goes quiet.
        """
        live = self._live.setdefault(game_id, _LiveBoards(chat_id))
        if live.tidy_later is not None:
            live.tidy_later.cancel()
            live.tidy_later = None
        if is_over:
            del self._live[game_id]
            self._remove_buttons(live, keep=0)
            return
        live.message_ids.append(message_id)
        if len(live.message_ids) > KEEP_LIVE:
            loop = asyncio.get_running_loop()
            live.tidy_later = loop.call_later(self.quiet_s, self._remove_buttons, live, KEEP_LIVE)

    def _remove_buttons(self, live: _LiveBoards, keep: int) -> None:
        live.tidy_later = None
        while len(live.message_ids) > keep:
            message_id = live.message_ids.popleft()
            self.courier.submit_spare(live.chat_id, KeyboardRemovalPost(live.chat_id, message_id))

    @property
    def game_count(self) -> int:
        """How many games have boards with buttons (running games shown by this process)."""
        return len(self._live)
