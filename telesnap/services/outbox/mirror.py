"""A chat's line as this process wrote and settled it: the sender reads it without the database.

Where this process is the outbox's one writer (one process on SQLite, leases
kept in memory), the rows a change commits are handed over as they commit
(:class:`~telesnap.storage.outbox_watch.OutboxWatch`) and settled rows are taken
out by the service that settles them, so a chat's pending rows are known without
reading them back. A chat is *known* once its whole line was read from the
database with nothing committed for it meanwhile; it is forgotten, and read
again next time, whenever this copy could be wrong:

- a lobby row joins it (its entry needs its game's lobby message, stored
  elsewhere), or a lobby is settled;
- a row does not read back (the database read sets it aside);
- any unit changed outbox rows otherwise than by adding them (a privacy erasure
  rewriting a name, a chat's rows deleted): every chat is forgotten;
- the resender finds the chat waiting in the database (the database is the truth).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from ...game import SnapError
from ...storage.models import OutboxMessage
from ...storage.outbox_watch import OutboxWatch
from ...storage.repositories import ShownBoard
from ...support.bounded import BoundedDict
from .rows import Entry, LobbyEntry, entry_of

logger = logging.getLogger(__name__)

KEPT = 4096
"""How many chats' marks and games' newest boards are kept (the newest); others are read."""


class LineMirror:
    """The known chats' pending entries in ``id`` order, and the newest board shown per game."""

    def __init__(self, watch: OutboxWatch, *, kept: int = KEPT) -> None:
        self._watch = watch
        self._rewrites = watch.rewrites
        self._lines: dict[int, dict[int, Entry]] = {}
        self._rows_added = 0
        self._touched: BoundedDict[int, int] = BoundedDict(kept, on_drop=self._forgot_touch)
        """Per chat, how many rows (of any chat) were added when its last one was: a mark
        that grows whenever a row joins the chat (to seed only a still line)."""
        self._forgotten_touch = 0
        """The newest of the marks dropped: what a chat not in ``_touched`` counts as."""
        self._shown: BoundedDict[int, ShownBoard | None] = BoundedDict(kept)
        watch.listen(self._added)

    def line(self, chat_id: int, after_id: int) -> list[Entry] | None:
        """The chat's pending entries above ``after_id`` (None: not known here)."""
        self._check_rewrites()
        entries = self._lines.get(chat_id)
        if entries is None:
            return None
        # Sorted: two changes' listeners may run in another order than their commits.
        return [entry for entry_id, entry in sorted(entries.items()) if entry_id > after_id]

    def newest_shown(self, game_id: int | None) -> tuple[bool, ShownBoard | None]:
        """(known, board): the newest board of ``game_id`` shown, if known here."""
        if game_id is None:
            return True, None
        if game_id in self._shown:
            return True, self._shown[game_id]
        return False, None

    def touched(self, chat_id: int) -> int:
        """A mark to pass to :meth:`seed` (taken before reading the chat's line)."""
        # Never smaller after a row was added: a forgotten chat counts as the newest forgotten.
        return self._touched.get(chat_id, self._forgotten_touch) + self._watch.rewrites

    def seed(
        self,
        chat_id: int,
        mark: int,
        entries: Sequence[Entry],
        game_id: int | None,
        newest_shown: ShownBoard | None,
    ) -> None:
        """Know the chat's whole line as read, unless something was committed since ``mark``."""
        self._check_rewrites()
        if game_id is not None:
            if newest_shown is None:
                self._shown.setdefault(game_id, None)
            else:
                self.shown(newest_shown)  # never older than what this process showed
        if self.touched(chat_id) != mark or any(isinstance(e, LobbyEntry) for e in entries):
            return
        self._lines[chat_id] = {entry.id: entry for entry in entries}

    def settled(self, chat_id: int, entry_ids: Iterable[int]) -> None:
        """The rows were sent or set aside: they leave the line."""
        entries = self._lines.get(chat_id)
        if entries is not None:
            for entry_id in entry_ids:
                entries.pop(entry_id, None)

    def shown(self, board: ShownBoard) -> None:
        """``board`` is on screen (the game's newest, unless a newer one is known).

        A version shown again in a newer message is that message now (as stored).
        """
        known = self._shown.get(board.game_id)
        if known is None or (known.version, known.message_id) < (board.version, board.message_id):
            self._shown[board.game_id] = board

    def forget(self, chat_ids: Iterable[int]) -> None:
        """Read these chats from the database next time."""
        for chat_id in chat_ids:
            self._lines.pop(chat_id, None)

    def _check_rewrites(self) -> None:
        if self._watch.rewrites != self._rewrites:
            self._rewrites = self._watch.rewrites
            self._lines.clear()
            self._shown.clear()

    def _added(self, rows: Sequence[OutboxMessage]) -> None:
        for row in rows:
            self._rows_added += 1
            self._touched[row.chat_id] = self._rows_added
            entries = self._lines.get(row.chat_id)
            if entries is None:
                continue
            try:
                entry = entry_of(row)
            except (KeyError, TypeError, ValueError, SnapError):
                entry = None  # the database read sets it aside, and logs it
            if entry is None:
                self.forget([row.chat_id])
            else:
                entries[entry.id] = entry

    def _forgot_touch(self, _chat_id: int, mark: int) -> None:
        self._forgotten_touch = max(self._forgotten_touch, mark)
