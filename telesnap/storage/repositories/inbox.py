"""The inbox of received updates: storing them, finding what is pending, marking them done."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    CursorResult,
    Integer,
    String,
    Table,
    bindparam,
    delete,
    func,
    null,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import NO_CHAT, InboxUpdate, utc_now
from ._dialect import per_dialect
from .committed_marks import CommittedMarks

__all__ = ["INBOX_CHANNEL", "CommittedMarks", "InboxRepository", "StoredElsewhere", "StoredUpdate"]

INBOX_CHANNEL = "telesnap_inbox"
"""The PostgreSQL NOTIFY channel that wakes the workers when updates are stored."""


@dataclass(frozen=True, slots=True)
class StoredUpdate:
    """A received update as the inbox holds it."""

    update_id: int
    chat_id: int
    thread_id: int
    is_call: bool
    payload: dict[str, Any]
    stamp_ns: int
    host_id: str


@dataclass(frozen=True, slots=True)
class StoredElsewhere:
    """What the wake-up of a store tells the other workers: enough to take the update.

    Space-separated fields (``origin`` has no space), written by the insert itself.

    >>> StoredElsewhere.parse("w1 7 -100 0 1 123")
    StoredElsewhere(origin='w1', update_id=7, chat_id=-100, thread_id=0, is_call=True, stamp_ns=123)
    >>> StoredElsewhere.parse("w1") is None
    True
    """

    origin: str
    update_id: int
    chat_id: int
    thread_id: int
    is_call: bool
    stamp_ns: int

    @staticmethod
    def parse(payload: str) -> StoredElsewhere | None:
        """The wake-up a payload says; None if it says none (then look at the inbox)."""
        fields = payload.split(" ")
        if len(fields) != 6:
            return None
        origin, *numbers = fields
        try:
            update_id, chat_id, thread_id, is_call, stamp_ns = map(int, numbers)
        except ValueError:
            return None
        return StoredElsewhere(origin, update_id, chat_id, thread_id, bool(is_call), stamp_ns)


# Core statements on the table: the ORM's bulk machinery costs more than the query here,
# and these run for every update.
_INBOX: Table = cast("Table", InboxUpdate.__table__)
_C = _INBOX.c
_PENDING = _C.processed_at.is_(None)


@per_dialect
def _store(insert: Callable[[Any], Any]) -> Any:
    """Insert the updates passed as parameters (not in VALUES: compiled once); skip stored ones."""
    return (
        insert(_INBOX).on_conflict_do_nothing(index_elements=[_C.update_id]).returning(_C.update_id)
    )


_STORE_AND_NOTIFY = (
    postgresql.insert(_INBOX)
    .on_conflict_do_nothing(index_elements=[_C.update_id])
    .returning(
        _C.update_id,
        func.pg_notify(
            INBOX_CHANNEL,
            func.concat_ws(
                " ",
                bindparam("origin", type_=String),
                _C.update_id,
                _C.chat_id,
                _C.thread_id,
                _C.is_call.cast(Integer),
                _C.stamp_ns,
            ),
        ),
    )
)
"""PostgreSQL: :func:`_store` that also wakes the other workers for each new update.

NOTIFY is delivered on commit (not at all on a rollback); each says which update
was stored (:class:`StoredElsewhere`), so a woken worker need not look for it.
"""


@per_dialect
def _mark_processed(insert: Callable[[Any], Any]) -> Any:
    """Insert the update as processed now, or mark it so if it is pending (not if it is done)."""
    now: BindParameter[datetime] = bindparam("now")
    return (
        insert(_INBOX)
        .values(
            update_id=bindparam("update_id"),
            chat_id=NO_CHAT,
            thread_id=0,
            is_call=False,
            received_at=now,
            processed_at=now,
        )
        .on_conflict_do_update(
            index_elements=[_C.update_id], set_={"processed_at": now}, where=_PENDING
        )
    )


_EMPTY = (
    update(_INBOX).where(_C.update_id.in_(bindparam("ids", expanding=True))).values(payload=null())
)
"""Drop the content of updates whose handlers are done (the mark stays)."""


_STORED_COLUMNS = (
    _C.update_id,
    _C.chat_id,
    _C.thread_id,
    _C.is_call,
    _C.payload,
    _C.stamp_ns,
    _C.host_id,
)


def _stored(row: Sequence[Any]) -> StoredUpdate:
    update_id, chat_id, thread_id, is_call, payload, stamp_ns, host_id = row
    return StoredUpdate(
        update_id,
        chat_id,
        thread_id,
        bool(is_call),
        dict(payload or {}),
        stamp_ns or 0,
        host_id or "",
    )


class InboxRepository:
    """The received updates, and which of them are processed (so a redelivery changes nothing)."""

    def __init__(
        self, session: Callable[[], AsyncSession], marks: CommittedMarks | None = None
    ) -> None:
        """``session`` gives the unit's session, made when first used (see ``mark_handled``)."""
        self._session_of = session
        self._marks = marks if marks is not None else CommittedMarks()
        self._marked_here: list[int] = []
        self._emptied_here: list[int] = []

    @property
    def _session(self) -> AsyncSession:
        return self._session_of()

    def committed(self) -> None:
        """The unit of work committed: the updates it marked are processed for good."""
        if self._marked_here:
            self._marks.add(self._marked_here)
            self._marked_here = []
        self._emptied_here = []

    def ended(self) -> None:
        """The unit of work ended: if it did not commit, what it emptied is to empty again."""
        self._marks.give_back(self._emptied_here)
        self._emptied_here = []

    async def store(self, updates: Sequence[StoredUpdate], origin: str = "") -> list[int]:
        """Store received updates (stored ones are left as they are); return the new ones' ids.

        On PostgreSQL the others are woken on commit; ``origin`` lets the storer skip its wake-up.
        """
        if not updates:
            return []
        now = utc_now()
        rows = [
            {
                "update_id": stored.update_id,
                "chat_id": stored.chat_id,
                "thread_id": stored.thread_id,
                "is_call": stored.is_call,
                "payload": stored.payload,
                "stamp_ns": stored.stamp_ns,
                "host_id": stored.host_id,
                "received_at": now,
                "processed_at": None,
            }
            for stored in updates
        ]
        if self._session.get_bind().dialect.name == "postgresql":
            # Only new updates wake the others: a redelivered one woke them when first stored.
            for row in rows:
                row["origin"] = origin
            return list((await self._session.scalars(_STORE_AND_NOTIFY, rows)).all())
        return list((await self._session.scalars(_store(self._session), rows)).all())

    async def empty_finished(self) -> None:
        """Drop the content of the updates whose handlers ended since this was last done."""
        finished = self._marks.take_finished()
        if finished:
            self._emptied_here = finished
            await self._session.execute(_EMPTY, {"ids": finished})

    async def pending_before(
        self, updates: Sequence[StoredUpdate], limit: int = 50
    ) -> list[tuple[int, int, int]] | None:
        """Pending non-call updates before ``updates`` in their topics, as (update, chat, thread).

        Oldest first, ``updates`` left out; None if more than ``limit``.
        """
        lines = [stored for stored in updates if not stored.is_call]
        if not lines:
            return []
        own = {stored.update_id for stored in lines}
        topics = {(stored.chat_id, stored.thread_id) for stored in lines}
        statement = (
            select(_C.update_id, _C.chat_id, _C.thread_id)
            .where(
                _PENDING,
                _C.is_call.is_(False),
                _C.update_id <= max(own),
                tuple_(_C.chat_id, _C.thread_id).in_(sorted(topics)),
            )
            .order_by(_C.update_id)
            .limit(limit + len(own))
        )
        rows = [tuple(row) for row in await self._session.execute(statement)]
        before = [(u, c, t) for u, c, t in rows if u not in own]
        return None if len(rows) >= limit + len(own) else before

    async def mark_update_processed(self, update_id: int) -> bool:
        """Mark ``update_id`` processed; return False if it was processed already (a redelivery).

        Call it in the unit of work of the update's changes, so a rollback unmarks it; an update
        the inbox lacks (a service used without the bot) is recorded as processed.
        """
        statement = _mark_processed(self._session)
        parameters = {"update_id": update_id, "now": utc_now()}
        # The row count says whether a row went in or changed; no row comes back to fetch.
        result = cast("CursorResult[Any]", await self._session.execute(statement, parameters))
        if result.rowcount != 1:
            return False
        self._marked_here.append(update_id)
        return True

    async def mark_handled(self, update_id: int, *, keep_content: bool = False) -> bool:
        """Mark an update processed once its handlers are done (if its change did not already).

        ``keep_content`` keeps its content (a Snap call: its race answers it). If this process
        committed its change: no statement, and True if :meth:`empty_finished` is to drop it.
        """
        if self._marks.take(update_id):
            if not keep_content:
                self._marks.finish(update_id)
            return not keep_content
        values: dict[str, Any] = {"processed_at": utc_now()}
        if not keep_content:
            values["payload"] = null()
        await self._session.execute(
            update(_INBOX).where(_C.update_id == update_id, _PENDING).values(**values)
        )
        return False

    async def take_unfinished_presses(
        self, since: datetime, before: datetime
    ) -> list[tuple[str, int]]:
        """Presses (not Snap calls) processed from ``since`` to ``before``, never finished.

        As (callback query id, stamp): their change committed but the process died before their
        handlers ended, so perhaps nobody answered. Their content is dropped: each is listed once.
        """
        statement = select(_C.update_id, _C.payload, _C.stamp_ns).where(
            _C.processed_at >= since,
            _C.processed_at < before,
            _C.payload.is_not(None),
            _C.is_call.is_(False),
        )
        presses, taken = [], []
        for update_id, payload, stamp_ns in await self._session.execute(statement):
            query = payload.get("callback_query") if isinstance(payload, dict) else None
            if isinstance(query, dict) and isinstance(query.get("id"), str) and stamp_ns:
                presses.append((query["id"], int(stamp_ns)))
                taken.append(update_id)
        if taken:
            await self._session.execute(_EMPTY, {"ids": taken})
        return presses

    async def pending_topics(self, limit: int = 500) -> list[tuple[int, int]]:
        """The (chat id, thread id) of topics with pending updates that are not calls."""
        statement = (
            select(_C.chat_id, _C.thread_id)
            .where(_PENDING, _C.is_call.is_(False))
            .group_by(_C.chat_id, _C.thread_id)
            .limit(limit)
        )
        return [
            (chat_id, thread_id) for chat_id, thread_id in await self._session.execute(statement)
        ]

    async def pending_calls(self, limit: int = 500) -> list[StoredUpdate]:
        """The pending calls, oldest first."""
        statement = (
            select(*_STORED_COLUMNS)
            .where(_PENDING, _C.is_call.is_(True))
            .order_by(_C.update_id)
            .limit(limit)
        )
        return [_stored(row) for row in await self._session.execute(statement)]

    async def next_in_topic(
        self, chat_id: int, thread_id: int, limit: int = 20
    ) -> list[StoredUpdate]:
        """The topic's pending updates that are not calls, in update_id order."""
        statement = (
            select(*_STORED_COLUMNS)
            .where(
                _PENDING, _C.is_call.is_(False), _C.chat_id == chat_id, _C.thread_id == thread_id
            )
            .order_by(_C.update_id)
            .limit(limit)
        )
        return [_stored(row) for row in await self._session.execute(statement)]

    async def pending(self, update_id: int) -> StoredUpdate | None:
        """The update, if it is still pending."""
        statement = select(*_STORED_COLUMNS).where(_C.update_id == update_id, _PENDING)
        row = (await self._session.execute(statement)).first()
        return None if row is None else _stored(row)

    async def forget_before(self, moment: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` updates processed before ``moment``; return how many went.

        Ids grow with time, so a batch in key order reads little more than it deletes.
        """
        oldest = (
            select(_C.update_id).where(_C.processed_at < moment).order_by(_C.update_id).limit(limit)
        )
        result = await self._session.execute(delete(_INBOX).where(_C.update_id.in_(oldest)))
        return cast("CursorResult[Any]", result).rowcount

    async def drop_payloads_before(self, moment: datetime, limit: int = 1000) -> int:
        """Drop the content of up to ``limit`` updates processed before ``moment``.

        The mark stays (a redelivery is still seen as one); the names and texts go.
        """
        oldest = (
            select(_C.update_id)
            .where(_C.processed_at < moment, _C.payload.is_not(None))
            .order_by(_C.update_id)
            .limit(limit)
        )
        result = await self._session.execute(
            update(_INBOX).where(_C.update_id.in_(oldest)).values(payload=null())
        )
        return cast("CursorResult[Any]", result).rowcount

    async def stored_updates(self, update_ids: Sequence[int]) -> list[StoredUpdate]:
        """The updates with these ids the inbox still holds, processed or not, in id order."""
        if not update_ids:
            return []
        statement = (
            select(*_STORED_COLUMNS)
            .where(_C.update_id.in_(list(update_ids)))
            .order_by(_C.update_id)
        )
        return [_stored(row) for row in await self._session.execute(statement)]
