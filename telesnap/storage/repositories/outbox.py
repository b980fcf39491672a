"""The outbox's rows: messages to send, in order per chat, and each chat's sender lease."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, case, delete, literal, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..liveness import owner_alive
from ..models import OutboxMessage, OutboxSender, OutboxState
from ..outbox_watch import MIRRORED, note_added
from ._dialect import upsert_insert

__all__ = ["OutboxRepository"]


class OutboxRepository:
    """Adds, reads and settles outbox messages; leases chats to one sender at a time."""

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
        row = OutboxMessage(
            chat_id=chat_id,
            thread_id=thread_id,
            kind=kind,
            payload=payload,
            game_id=game_id,
            board_version=board_version,
            state=OutboxState.PENDING.value,
        )
        self._session.add(row)
        await self._session.flush()
        note_added(self._session.sync_session, row)
        if game_id is not None:
            self._added[game_id] = row
        return row

    async def add_note(self, game_id: int, kind: str, note: dict[str, Any]) -> bool:
        """Add ``note`` to the newest row of ``game_id`` this unit of work added, if of ``kind``.

        False: this unit of work added no such row (nothing changed).
        """
        row = self._added.get(game_id)
        if row is None or row.kind != kind:
            return False
        notes = [*row.payload.get("notes", ()), note]
        row.payload = {**row.payload, "notes": notes}  # a new dict: the change is seen
        await self._session.flush()
        return True

    async def pending(self, chat_id: int, after_id: int = 0) -> list[OutboxMessage]:
        """The chat's unsent messages with an id above ``after_id``, oldest first."""
        statement = (
            select(OutboxMessage)
            .where(
                OutboxMessage.state == OutboxState.PENDING.value,
                OutboxMessage.chat_id == chat_id,
                OutboxMessage.id > after_id,
            )
            .order_by(OutboxMessage.id)
        )
        return list(await self._session.scalars(statement))

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

    async def chats_waiting(
        self, created_before: datetime, now: datetime, *, live_owners: bool = False
    ) -> list[int]:
        """Chats with a message unsent since before ``created_before`` and no live sender.

        ``live_owners`` (PostgreSQL): a lease whose owner holds no owner lock
        (:func:`~telesnap.storage.liveness.owner_alive`) is a dead worker's: no sender.
        """
        leased = select(OutboxSender.chat_id).where(
            OutboxSender.lease_until > now, OutboxSender.owner != ""
        )
        if live_owners:
            leased = leased.where(owner_alive(OutboxSender.owner))
        statement = (
            select(OutboxMessage.chat_id)
            .where(
                OutboxMessage.state == OutboxState.PENDING.value,
                OutboxMessage.created_at < created_before,
                OutboxMessage.chat_id.not_in(leased),
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
    ) -> None:
        """Mark pending messages sent (with the message showing them) or failed."""
        if not ids:
            return
        await self._session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.id.in_(ids), OutboxMessage.state == OutboxState.PENDING.value)
            .values(state=state.value, done_at=at, message_id=message_id, error=error)
            .execution_options(**{MIRRORED: True})
        )

    async def mark_sent(self, shown: Mapping[int, int], at: datetime) -> None:
        """Mark pending messages sent, each with the message showing it, in one statement.

        ``shown``: row id -> the id of the message that showed it.
        """
        if not shown:
            return
        message_ids = set(shown.values())
        if len(message_ids) == 1:
            message_id: Any = next(iter(message_ids))
        else:
            whens = {literal(row, BigInteger): literal(m, BigInteger) for row, m in shown.items()}
            message_id = case(whens, value=OutboxMessage.id)
        await self._session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.id.in_(shown), OutboxMessage.state == OutboxState.PENDING.value)
            .values(state=OutboxState.SENT.value, done_at=at, message_id=message_id, error=None)
            .execution_options(**{MIRRORED: True})
        )

    async def forget_settled(self, before: datetime) -> int:
        """Delete messages sent or failed before ``before``; how many were deleted."""
        result = await self._session.execute(
            delete(OutboxMessage)
            .where(OutboxMessage.state != OutboxState.PENDING.value, OutboxMessage.done_at < before)
            .execution_options(**{MIRRORED: True})  # settled rows: no line holds them
        )
        return int(getattr(result, "rowcount", 0) or 0)

    async def claim(
        self, chat_id: int, owner: str, now: datetime, until: datetime, *, live_owners: bool = False
    ) -> bool:
        """Lease the chat to ``owner`` until ``until``, unless another owner's lease is live.

        ``live_owners`` (PostgreSQL): a lease whose owner is dead is not live, and
        ``owner`` takes nothing while it looks dead itself (its liveness connection
        is lost: the others may take its chats); see :mod:`telesnap.storage.liveness`.
        """
        insert = upsert_insert(self._session, OutboxSender).values(
            chat_id=chat_id, owner=owner, lease_until=until, pace={}
        )
        table = OutboxSender.__table__
        free = [table.c.owner == owner, table.c.owner == "", table.c.lease_until <= now]
        if live_owners:
            free.append(~owner_alive(table.c.owner))
        statement = insert.on_conflict_do_update(
            index_elements=[OutboxSender.chat_id],
            set_={"owner": owner, "lease_until": until},
            where=or_(*free),
        )
        # A row comes back only where the lease was written: whoever else held it, nothing.
        alive = owner_alive(owner) if live_owners else true()
        held = await self._session.execute(statement.returning(table.c.owner, alive.label("alive")))
        row = held.first()
        return row is not None and row.owner == owner and bool(row.alive)

    async def lease_of(
        self, chat_id: int, owner: str, now: datetime, *, live_owners: bool = False
    ) -> datetime | None:
        """Until when ``owner`` holds the chat (None: it does not hold it now).

        ``live_owners`` (PostgreSQL): None too while ``owner`` looks dead (see :meth:`claim`).
        """
        statement = select(OutboxSender.lease_until).where(
            OutboxSender.chat_id == chat_id,
            OutboxSender.owner == owner,
            OutboxSender.lease_until > now,
        )
        if live_owners:
            statement = statement.where(owner_alive(owner))
        return await self._session.scalar(statement)

    async def release(self, chat_id: int, owner: str) -> None:
        """End ``owner``'s lease of the chat (its pace is kept for the next sender)."""
        await self._session.execute(
            update(OutboxSender)
            .where(OutboxSender.chat_id == chat_id, OutboxSender.owner == owner)
            .values(owner="")
        )

    async def release_unless_pending(self, chat_ids: Sequence[int], owner: str) -> dict[int, bool]:
        """End ``owner``'s lease of each chat unless it has a message to send; whether it has.

        One statement for them all. A chat ``owner`` does not hold is left out of
        the answer (nothing changed there).
        """
        if not chat_ids:
            return {}
        pending = (
            select(OutboxMessage.id)
            .where(
                OutboxMessage.state == OutboxState.PENDING.value,
                OutboxMessage.chat_id == OutboxSender.chat_id,
            )
            .exists()
        )
        kept = await self._session.execute(
            update(OutboxSender)
            .where(OutboxSender.chat_id.in_(chat_ids), OutboxSender.owner == owner)
            .values(owner=case((pending, OutboxSender.owner), else_=""))
            .returning(OutboxSender.chat_id, OutboxSender.owner)
            .execution_options(synchronize_session=False)
        )
        return {row.chat_id: row.owner != "" for row in kept}

    async def release_all(self, owner: str | None) -> None:
        """End every lease ``owner`` holds (a worker that stops); None: everyone's."""
        statement = update(OutboxSender).where(OutboxSender.owner != "")
        if owner is not None:
            statement = statement.where(OutboxSender.owner == owner)
        await self._session.execute(statement.values(owner=""))

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

    async def lock_senders(self, chat_ids: Sequence[int]) -> None:
        """Lock the chats' sender rows (those that exist) until the transaction ends.

        In ``chat_id`` order, in one statement: two transactions that lock some of the
        same chats so never wait for each other.
        """
        if not chat_ids:
            return
        await self._session.execute(
            select(OutboxSender.chat_id)
            .where(OutboxSender.chat_id.in_(chat_ids))
            .order_by(OutboxSender.chat_id)
            .with_for_update()
        )

    async def locked_pace(self, chat_id: int) -> OutboxSender:
        """The chat's sender row, locked until the transaction ends (created if missing)."""
        insert = upsert_insert(self._session, OutboxSender).values(
            chat_id=chat_id, owner="", lease_until=datetime.fromtimestamp(0).astimezone(), pace={}
        )
        await self._session.execute(insert.on_conflict_do_nothing(index_elements=["chat_id"]))
        row = await self._session.scalar(
            select(OutboxSender)
            .where(OutboxSender.chat_id == chat_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        assert row is not None
        return row
