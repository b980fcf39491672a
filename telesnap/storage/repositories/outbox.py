"""The outbox's rows: messages to send, in order per chat."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Table,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    select,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import ACTIVE_STATUSES, Game, OutboxMessage, OutboxState, UtcDateTime, utc_now
from ..outbox_watch import KEPT_BY_CALLER, note_added

__all__ = ["OUTBOX_CHANNEL", "OutboxRepository", "ShownBoard"]

OUTBOX_CHANNEL = "telesnap_outbox"
"""PostgreSQL: the NOTIFY channel of committed outbox rows, the chat's id as payload.

A trigger sends it for every row inserted (migration ``c7e2f4a81d95``).
"""


@dataclass(frozen=True, slots=True)
class ShownBoard:
    """One board message that reached Telegram: the game, its board version, when."""

    game_id: int
    version: int
    message_id: int
    shown_at: datetime


_TABLE = cast("Table", OutboxMessage.__table__)
_C = _TABLE.c
# Core statements on the table: the ORM's unit of work and bulk updates cost more than
# the statements, and every board written and sent runs them.
_ADD = insert(_TABLE).returning(_C.id)
_OWN = update(_TABLE).execution_options(**{KEPT_BY_CALLER: True})
"""An update of rows whose copies the caller keeps (rows it settles, or a note on its own)."""
_STILL_PENDING = _OWN.where(
    _C.id.in_(bindparam("ids", expanding=True)), _C.state == OutboxState.PENDING.value
)
"""The rows ``ids`` that are still pending, to settle."""
_SETTLE = _STILL_PENDING.values(
    state=bindparam("to"),
    done_at=bindparam("at"),
    message_id=bindparam("message"),
    error=bindparam("why"),
).returning(_C.id)
"""Built once: every board sent runs it."""
_PENDING = (
    select(OutboxMessage)
    .where(
        OutboxMessage.state == OutboxState.PENDING.value,
        OutboxMessage.chat_id == bindparam("chat_id"),
        OutboxMessage.id > bindparam("after_id"),
    )
    .order_by(OutboxMessage.id)
)
"""A chat's line, built once: with several workers it is read for every board."""
_VIEWS = _C.game_id == bindparam("game_id"), _C.shown_at.is_not(None)
"""The rows shown as their game's board (built once: a call or a line reads them)."""
_FIRST_SHOWN = select(func.min(_C.shown_at)).where(
    *_VIEWS, _C.board_version == bindparam("version")
)
_NEWEST_SHOWN = (
    select(_C.board_version, _C.message_id, _C.shown_at)
    .where(*_VIEWS)
    .order_by(_C.board_version.desc(), _C.message_id.desc())
    .limit(1)
)
_NEWEST_VERSION_SHOWN = select(func.max(_C.board_version)).where(*_VIEWS)


class OutboxRepository:
    """Adds, reads and settles outbox messages."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self._added: dict[int, OutboxMessage] = {}
        """The newest row this unit of work added, per game."""

    async def add(
        self,
        chat_id: int,
        thread_id: int,
        kind: str,
        payload: dict[str, Any],
        *,
        game_id: int | None = None,
        board_version: int | None = None,
    ) -> OutboxMessage:
        """Queue a message (sent after the transaction commits, in ``id`` order)."""
        values = {
            "chat_id": chat_id,
            "thread_id": thread_id,
            "kind": kind,
            "payload": payload,
            "game_id": game_id,
            "board_version": board_version,
            "state": OutboxState.PENDING.value,
            "created_at": utc_now(),
        }
        row_id = (await self._session.execute(_ADD, values)).scalar_one()
        row = OutboxMessage(id=row_id, **values)  # not in the session: handed over at commit
        note_added(self._session.sync_session, row)
        if game_id is not None:
            self._added[game_id] = row
        return row

    async def add_note(self, game_id: int, kind: str, note: dict[str, Any]) -> bool:
        """Add ``note`` to this unit's newest row of ``game_id`` if of ``kind``; False if none."""
        row = self._added.get(game_id)
        if row is None or row.kind != kind:
            return False
        notes = [*row.payload.get("notes", ()), note]
        row.payload = {**row.payload, "notes": notes}
        await self._session.execute(_OWN.where(_C.id == row.id).values(payload=row.payload))
        return True

    async def pending(self, chat_id: int, after_id: int = 0) -> list[OutboxMessage]:
        """The chat's unsent messages with an id above ``after_id``, oldest first."""
        parameters = {"chat_id": chat_id, "after_id": after_id}
        return list(await self._session.scalars(_PENDING, parameters))

    async def sent_of_game(self, game_id: int, kind: str, limit: int) -> list[OutboxMessage]:
        """The game's newest ``limit`` messages of ``kind`` marked sent, oldest first."""
        statement = (
            select(OutboxMessage)
            .where(
                OutboxMessage.game_id == game_id,
                OutboxMessage.kind == kind,
                OutboxMessage.state == OutboxState.SENT.value,
            )
            .order_by(OutboxMessage.id.desc())
            .limit(limit)
        )
        return list(reversed(list(await self._session.scalars(statement))))

    async def chats_waiting(self, created_before: datetime) -> list[int]:
        """Chats with a message unsent since before ``created_before``."""
        statement = (
            select(OutboxMessage.chat_id)
            .where(
                OutboxMessage.state == OutboxState.PENDING.value,
                OutboxMessage.created_at < created_before,
            )
            .distinct()
        )
        return list(await self._session.scalars(statement))

    async def settle(
        self,
        ids: Sequence[int],
        state: OutboxState,
        at: datetime,
        *,
        message_id: int | None = None,
        error: str | None = None,
    ) -> set[int]:
        """Mark pending messages sent (with the message showing them) or failed; those it did."""
        if not ids:
            return set()
        parameters = {
            "ids": list(ids),
            "to": state.value,
            "at": at,
            "message": message_id,
            "why": error,
        }
        return set((await self._session.scalars(_SETTLE, parameters)).all())

    async def mark_sent(
        self,
        shown: Mapping[int, int | None],
        at: datetime,
        views: Mapping[int, datetime] | None = None,
    ) -> set[int]:
        """Mark pending messages sent, each with the message showing it, in one statement.

        ``shown``: row id -> message id (None: settled unshown). ``views``: row id -> when its board
        was shown, for rows whose message shows their board (of boards sent together, the last).
        Returns the rows it marked (not those another worker marked first).
        """
        if not shown:
            return set()
        message_ids = set(shown.values())
        if len(message_ids) == 1 and not views:  # the common case: one message, no board
            return await self.settle(
                list(shown), OutboxState.SENT, at, message_id=message_ids.pop()
            )
        values: dict[str, Any] = {"state": OutboxState.SENT.value, "done_at": at, "error": None}
        if len(message_ids) == 1:
            values["message_id"] = message_ids.pop()
        else:
            values["message_id"] = case(
                {literal(row, BigInteger): literal(m, BigInteger) for row, m in shown.items()},
                value=_C.id,
            )
        if views:
            values["shown_at"] = case(
                {literal(row, BigInteger): literal(t, UtcDateTime()) for row, t in views.items()},
                value=_C.id,
            )
        statement = _STILL_PENDING.values(**values).returning(_C.id)
        return set((await self._session.scalars(statement, {"ids": list(shown)})).all())

    async def sent_since(self, since: datetime) -> list[tuple[int, str, datetime]]:
        """The sends since ``since``, as (chat, kind, when), oldest first.

        The rows one send settled share its message and moment: they count once.
        """
        statement = (
            select(_C.chat_id, _C.kind, _C.done_at)
            .where(
                _C.state == OutboxState.SENT.value,
                _C.done_at >= since,
                _C.message_id.is_not(None),
            )
            .group_by(_C.chat_id, _C.message_id, _C.kind, _C.done_at)
            .order_by(_C.done_at)
        )
        return [(chat_id, kind, at) for chat_id, kind, at in await self._session.execute(statement)]

    async def messages_showing(self, ids: Sequence[int]) -> set[int]:
        """The messages the rows ``ids`` that are marked sent were shown in."""
        statement = select(_C.message_id).where(
            _C.id.in_(list(ids)),
            _C.state == OutboxState.SENT.value,
            _C.message_id.is_not(None),
        )
        return {message_id for message_id in await self._session.scalars(statement) if message_id}

    async def board_shown_at(self, game_id: int, version: int) -> datetime | None:
        """When board ``version`` of the game was first shown, or None if it never was."""
        parameters = {"game_id": game_id, "version": version}
        first: datetime | None = await self._session.scalar(_FIRST_SHOWN, parameters)
        return first

    async def newest_row_shown_at(self, game_id: int, version: int) -> datetime | None:
        """When the newest row of board ``version`` was shown (None: not yet, or no row).

        A skip leaves the board's version as it was: the row it wrote is that version's newest.
        """
        statement = (
            select(_C.shown_at)
            .where(_C.game_id == game_id, _C.board_version == version)
            .order_by(_C.id.desc())
            .limit(1)
        )
        shown: datetime | None = await self._session.scalar(statement)
        return shown

    async def newest_board(self, game_id: int) -> ShownBoard | None:
        """The game's newest board shown so far, in its newest message (None before any).

        A version shown again in a newer message (a wrong call, a repost after a restart) is on
        screen there: that message's buttons are the live ones.
        """
        row = (await self._session.execute(_NEWEST_SHOWN, {"game_id": game_id})).first()
        if row is None:
            return None
        return ShownBoard(game_id, row.board_version, row.message_id, row.shown_at)

    async def boards_before_newest(self, shown_since_last: timedelta) -> list[tuple[int, int]]:
        """Each board message older than its game's newest, not noted bare, of recent games.

        Recent: its newest board came within ``shown_since_last`` of the last in any game.
        """
        last = await self._session.scalar(select(func.max(_C.shown_at)))
        if last is None:
            return []
        recent = select(_C.game_id).where(_C.shown_at >= last - shown_since_last)
        rows = await self._session.execute(
            select(_C.game_id, _C.chat_id, _C.message_id, _C.bared)
            .where(_C.game_id.in_(recent), _C.shown_at.is_not(None))
            .order_by(_C.game_id, _C.board_version.desc(), _C.message_id.desc())
        )
        newest: dict[int, int] = {}
        live: dict[tuple[int, int], None] = {}
        for game_id, chat_id, message_id, bared in rows:
            if newest.setdefault(game_id, message_id) != message_id and not bared:
                live[(chat_id, message_id)] = None
        return list(live)

    async def mark_bared(
        self, messages: Collection[tuple[int, int]], *, bared: bool = True
    ) -> None:
        """Note that these messages (chat, message) lost their buttons (``bared=False``: not)."""
        if messages:
            pairs = tuple_(_C.chat_id, _C.message_id).in_(list(messages))
            sent = _C.state == OutboxState.SENT.value  # the index's first column: no table scan
            # Sent rows, which no line in memory holds: not a rewrite of the pending ones.
            await self._session.execute(_OWN.where(sent, pairs).values(bared=bared))

    async def newest_board_version(self, game_id: int) -> int | None:
        """The highest board version of the game shown so far (None before any)."""
        newest: int | None = await self._session.scalar(_NEWEST_VERSION_SHOWN, {"game_id": game_id})
        return newest

    async def forget_settled(self, before: datetime) -> int:
        """Delete messages sent or failed before ``before``; how many were deleted.

        A game still on keeps its rows: its boards' views are read from them.
        """
        running = select(Game.id).where(Game.status.in_(ACTIVE_STATUSES))
        result = await self._session.execute(
            delete(OutboxMessage)
            .where(
                OutboxMessage.state != OutboxState.PENDING.value,
                OutboxMessage.done_at < before,
                OutboxMessage.game_id.is_(None) | OutboxMessage.game_id.not_in(running),
            )
            .execution_options(**{KEPT_BY_CALLER: True})  # settled rows: no line holds them
        )
        return int(getattr(result, "rowcount", 0) or 0)

    async def has_pending(self, chat_id: int) -> bool:
        """Whether the chat has a message still to send."""
        found = await self._session.scalar(
            select(OutboxMessage.id)
            .where(
                OutboxMessage.state == OutboxState.PENDING.value,
                OutboxMessage.chat_id == chat_id,
            )
            .limit(1)
        )
        return found is not None
