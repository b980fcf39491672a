"""The rows of the durable outbox: boards, lobbies and notices, written and read back.

A change writes what it must show in its own transaction. A notice is data, not text (a
stable :class:`NoticeKind` and JSON arguments), rendered in the chat's language when sent,
so the services never translate. A note rides in its game's board row
(:func:`note_board`), so it can never arrive apart from it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sqlalchemy import inspect

from ...game import SnapError
from ...storage.models import OutboxMessage
from ...storage.uow import UnitOfWork
from ..types import Place
from ..views import LobbyView, PlayOutcome, lobby_from_json, lobby_to_json, play_from_json

logger = logging.getLogger(__name__)

BOARD = "board"
"""The kind of outbox row that shows a game's table and what just happened."""
LOBBY = "lobby"
"""The kind of outbox row that shows a game's lobby as a change left it."""
NOTICE = "notice"
"""The kind of outbox row that is a message of its own (a reminder, a lobby closed...)."""


class NoticeKind(StrEnum):
    """What a notice says; the value is stored, so it never changes."""

    TURN_REMINDER = "turn_reminder"
    """args: ``user_id``, ``name`` (the player whose turn it is)."""
    LOBBY_EXPIRED = "lobby_expired"
    """Nobody started the game: the lobby is closed."""
    CALLED_OFF = "called_off"
    """The lobby was called off (``/endgame``)."""
    SETTINGS_SAVED = "settings_saved"
    """args: ``settings`` (the chat's settings values after the change), ``language`` (the
    asker's language code: the notice's while the chat has none)."""
    AUTO_FLIPPED = "auto_flipped"
    """A note: args ``user_id``, ``name``: the player the timer flipped for."""
    SKIPPED = "skipped"
    """A note: args ``user_id``, ``name``: the player whose turn the timer skipped."""
    IDLE_ABANDONED = "idle_abandoned"
    """A note: nobody played for too long, the game is abandoned."""
    TIME_UP = "time_up"
    """A note: the game's time limit is reached."""
    STOPPED = "stopped"
    """A note: args ``user_id``, ``name``: who stopped the running game with ``/endgame``."""
    RESUMED = "resumed"
    """A note: the bot started again and shows the running game again ("I am back")."""
    LOBBY_OPENED = "lobby_opened"
    """A private message (``/notify``): args ``chat`` (its title), ``user_id`` and ``name``
    (who opened the lobby), ``link`` (to the lobby, or None)."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One notice: its kind (a :class:`NoticeKind` value) and its arguments (JSON values).

    ``kind`` stays a string: a row written by a newer version may carry a kind this one does
    not know (the bot sets such a row aside).
    """

    kind: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The notice as a JSON-ready dict (:meth:`from_json` rebuilds it).

        >>> Notice.from_json(Notice("time_up").to_json()) == Notice("time_up")
        True
        """
        return {"kind": self.kind, "args": dict(self.args)}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Notice:
        """Rebuild what :meth:`to_json` wrote (raises ``ValueError`` if it is not a notice)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a notice is a JSON object, not {type(data).__name__}")
        kind, args = data["kind"], data.get("args", {})
        if not isinstance(kind, str) or not isinstance(args, dict):
            raise ValueError(f"not a notice: {data!r}")
        return Notice(kind, args)


async def record_notice(
    uow: UnitOfWork,
    place: Place,
    notice: Notice,
    *,
    game_id: int | None = None,
    reply_to: int | None = None,
) -> None:
    """Write ``notice`` to the outbox in ``uow``: sent after the change commits, in line.

    ``reply_to``: the message the notice answers (the command that made the change).
    """
    payload = {"notice": notice.to_json(), "reply_to": reply_to}
    await uow.outbox.add(place.chat_id, place.thread_id, NOTICE, payload, game_id=game_id)


async def record_lobby(uow: UnitOfWork, place: Place, lobby: LobbyView) -> None:
    """Write the lobby a change left to the outbox in ``uow`` (for the game's lobby message)."""
    await uow.outbox.add(
        place.chat_id, place.thread_id, LOBBY, lobby_to_json(lobby), game_id=lobby.game_id
    )


async def note_board(uow: UnitOfWork, place: Place, game_id: int, notice: Notice) -> None:
    """Add ``notice`` as a note to the board this change of ``game_id`` wrote in ``uow``.

    Without such a board the notice goes as a message of its own, so it is never lost.
    """
    if not await uow.outbox.add_note(game_id, BOARD, notice.to_json()):
        await record_notice(uow, place, notice, game_id=game_id)


# -- reading rows back ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """One unsent board: where it goes, its row id (the order), what it shows, its notes."""

    id: int
    chat_id: int
    thread_id: int
    game_id: int
    board: PlayOutcome
    notes: tuple[Notice, ...] = ()


@dataclass(frozen=True, slots=True)
class LobbyEntry:
    """One unsent lobby: the lobby a change left (shown in the game's one lobby message)."""

    id: int
    chat_id: int
    thread_id: int
    game_id: int
    lobby: LobbyView


@dataclass(frozen=True, slots=True)
class NoticeEntry:
    """One unsent notice: a message of its own, maybe answering ``reply_to``."""

    id: int
    chat_id: int
    thread_id: int
    game_id: int | None
    notice: Notice
    reply_to: int | None


Entry = BoardEntry | LobbyEntry | NoticeEntry
"""An unsent row of any kind, read back."""

UNREADABLE = (KeyError, TypeError, ValueError, SnapError)
"""What reading back a row written by another version raises."""


_BOARD = "telesnap_board"
"""Where a board row written in this process keeps its view (its state's ``info``)."""


def keep_board(row: OutboxMessage, board: PlayOutcome) -> None:
    """Keep ``board`` with the row just written for it, instead of decoding it back.

    A row read from the database decodes to the same view (JSON round-trips it).
    """
    inspect(row).info[_BOARD] = board


def entry_of(row: OutboxMessage) -> Entry:
    """The entry a row holds; one of :data:`UNREADABLE` if this version cannot read it.

    Every kind's payload is a JSON object: any other shape is unreadable, not a crash later.
    """
    payload = row.payload
    if not isinstance(payload, Mapping):
        raise ValueError(f"an outbox row's payload is a JSON object, not {type(payload).__name__}")
    if row.kind == BOARD and row.game_id is not None:
        notes = tuple(Notice.from_json(note) for note in payload.get("notes", ()))
        board = inspect(row).info.get(_BOARD) or play_from_json(payload)
        return BoardEntry(row.id, row.chat_id, row.thread_id, row.game_id, board, notes)
    if row.kind == LOBBY and row.game_id is not None:
        lobby = lobby_from_json(payload)
        return LobbyEntry(row.id, row.chat_id, row.thread_id, row.game_id, lobby)
    if row.kind == NOTICE:
        reply_to = payload.get("reply_to")
        if reply_to is not None and not isinstance(reply_to, int):
            raise ValueError(f"reply_to is not a message id: {reply_to!r}")
        notice = Notice.from_json(payload["notice"])
        return NoticeEntry(row.id, row.chat_id, row.thread_id, row.game_id, notice, reply_to)
    raise ValueError(f"an outbox row of unknown kind {row.kind!r}")


def read_rows(rows: Sequence[OutboxMessage]) -> tuple[list[Entry], list[int]]:
    """The entries of ``rows`` (in their order), and the ids of the rows that cannot be read.

    An unreadable row is logged and set aside, so it never holds up the chat's later rows.
    """
    entries: list[Entry] = []
    unreadable: list[int] = []
    for row in rows:
        try:
            entries.append(entry_of(row))
        except UNREADABLE:
            logger.exception(
                "chat %s: outbox row %s (%s, game %s) cannot be read; set aside",
                row.chat_id,
                row.id,
                row.kind,
                row.game_id,
            )
            unreadable.append(row.id)
    return entries, unreadable


def next_head(entries: Sequence[Entry]) -> list[Entry]:
    """What goes next from a chat's unsent rows (in ``id`` order): the oldest, with its run.

    The oldest row goes first whatever its topic, so a forum's topics take turns; with it go
    its topic's following rows of the same kind and game (a notice goes alone). A topic's rows
    never pass each other, so a reminder never overtakes the board before it.

    >>> from telesnap.services.views import LobbyView
    >>> def lobby(row_id: int, thread_id: int, game_id: int) -> LobbyEntry:
    ...     return LobbyEntry(row_id, -1, thread_id, game_id, LobbyView(game_id, 1, (), "lobby"))
    >>> [e.id for e in next_head([lobby(1, 0, 7), lobby(2, 5, 8), lobby(3, 0, 7), lobby(4, 0, 9)])]
    [1, 3]
    """
    if not entries:
        return []
    head = entries[0]
    if isinstance(head, NoticeEntry):
        return [head]
    taken: list[Entry] = [head]
    for entry in entries[1:]:
        if entry.thread_id != head.thread_id:
            continue
        if type(entry) is not type(head) or entry.game_id != head.game_id:
            break
        taken.append(entry)
    return taken
