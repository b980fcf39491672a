"""A tidy chat: boards whose turn has passed lose their buttons, when it costs nothing.

Every flip leaves a board in the chat. Once a board is two boards old, its
Flip can only answer "This is an old message" and its Snap! is no better than
the newest board's, so the bot takes its buttons off. The board just before
the newest keeps them: a player may not have the newest yet, or may press the
one they see while the next is on its way. When the game ends, every board of
the game loses its buttons.

The removals are spare posts of the outbox: they go out only when the chat has
nothing else to send and a full burst at hand, so they never delay a board,
and they count in the flood windows like any edit. A fast game therefore keeps
its old buttons until it slows down or ends. After a restart, boards shown
before it keep theirs (their presses still get a clear answer).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .outbox import Outbox
from .posts import KeyboardRemovalPost

KEEP_LIVE = 2
"""Boards of a running game that keep their buttons: the newest and the one before."""


@dataclass(eq=False)
class BoardTidier:
    """Remembers each running game's boards that still have buttons, and tidies them."""

    outbox: Outbox
    _live: dict[int, tuple[int, deque[int]]] = field(default_factory=dict)

    def board_shown(self, chat_id: int, game_id: int, message_id: int, *, is_over: bool) -> None:
        """A board of ``game_id`` went out as ``message_id``; older ones may lose their buttons."""
        _, live = self._live.setdefault(game_id, (chat_id, deque()))
        if not is_over:
            live.append(message_id)
        keep = 0 if is_over else KEEP_LIVE
        while len(live) > keep:
            self.outbox.submit_spare(chat_id, KeyboardRemovalPost(chat_id, live.popleft()))
        if is_over:
            del self._live[game_id]

    @property
    def game_count(self) -> int:
        """How many games have boards with buttons (running games shown by this process)."""
        return len(self._live)
