"""A tidy chat: only a game's newest board keeps its buttons, and an ended game keeps none.

When a board of a game is shown, the buttons of the game's board before it
come off in the chat's very next send: the removal is queued right behind the
board (:meth:`~.outbox.Outbox.submit_next`), ahead of any board waiting. So
at any moment at most two boards of a game have buttons: the newest, and the
one before it until the next slot of the pace (a press on it may be on its
way; a press sent is answered whatever becomes of the buttons). The last board
of a game has none, and the removal of the one before it goes right behind it,
so an ended game keeps no buttons longer than one slot of the pace.

Each removal is an edit, counted in the flood windows like any message, and
planned into the pace: a busy group shows a board every two slots instead of
every one, and never falls behind. A live board (one message per game, edited
in place) costs nothing here: its message stays the newest, unless a new one
had to be posted (the old could not be edited), whose predecessor then loses
its buttons the same way.

The board before is the game's newest board shown as stored when this board's
rows were read (whichever worker showed it), and this process's own newest board
when that one is newer (shown after the read). So a board shown by another worker,
or before a restart, loses its buttons too, and no board loses them twice.
Removals go through the courier (never to a chat that removed the bot).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .courier import Courier
from .posts import KeyboardRemovalPost


@dataclass(eq=False)
class _LiveBoards:
    """One running game as this process showed it: its newest board, and those it bared."""

    chat_id: int
    newest: tuple[int, int] | None = None
    """(message, version) of the game's newest board this process showed."""
    bare: set[int] = field(default_factory=set)
    """Its boards whose buttons this process took off (never taken off twice)."""


@dataclass(eq=False)
class BoardTidier:
    """Remembers each running game's newest board here, and takes the buttons off the one before."""

    courier: Courier
    _live: dict[int, _LiveBoards] = field(default_factory=dict)

    def board_shown(
        self,
        chat_id: int,
        game_id: int,
        message_id: int,
        version: int,
        *,
        is_over: bool,
        previous: tuple[int, int] | None = None,
    ) -> None:
        """Board ``version`` of ``game_id`` went out as ``message_id``: the one before is bared.

        ``previous``: (message, version) of the game's newest board shown before, as
        stored when this board's rows were read. Whoever showed it, nobody has bared
        it yet (the chat's sender is one worker at a time). This process's own newest
        board is bared too when it is newer (shown after that read); when it is older,
        the worker that showed ``previous`` bared it already. The last board of a game
        has no buttons.
        """
        live = self._live.setdefault(game_id, _LiveBoards(chat_id))
        older = [] if previous is None else [previous[0]]
        # Not older than the stored one: shown after the read (a board showing the same
        # version again, a wrong call's, whose mark came after the read, is one too).
        if live.newest is not None and (previous is None or live.newest[1] >= previous[1]):
            older.append(live.newest[0])
        for old in older:
            if old != message_id and old not in live.bare:
                live.bare.add(old)
                self.courier.submit_next(chat_id, KeyboardRemovalPost(chat_id, old))
        if is_over:
            del self._live[game_id]
        else:
            live.newest = (message_id, version)

    @property
    def game_count(self) -> int:
        """How many games have boards with buttons (running games shown by this process)."""
        return len(self._live)
