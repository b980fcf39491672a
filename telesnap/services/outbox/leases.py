"""Who sends a chat's boards now: a lease per chat, stored (workers) or in memory (one process).

:class:`StoredLeases` keeps each chat's lease in its ``outbox_senders`` row, so
every worker sharing the database sees who holds a chat. With SQLite the bot is
one process: :class:`MemoryLeases` keeps the same leases, with the same expiry,
in the process, so taking and giving up a chat writes nothing to the database.
Both take the unit of work the outbox runs in (the memory one ignores it).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from ...storage.uow import UnitOfWork


class SenderLeases(Protocol):
    """Leases of chats to the worker that sends their boards."""

    stored: bool
    """Whether taking or giving up a chat writes to the database (else: the process holds it)."""

    async def claim(
        self, uow: UnitOfWork, chat_id: int, owner: str, now: datetime, until: datetime
    ) -> bool:
        """Lease the chat to ``owner`` until ``until``, unless another owner's lease is live."""
        ...

    async def lease_of(
        self, uow: UnitOfWork, chat_id: int, owner: str, now: datetime
    ) -> datetime | None:
        """Until when ``owner`` holds the chat (None: it does not hold it now)."""
        ...

    async def release(self, uow: UnitOfWork, chat_id: int, owner: str) -> None:
        """End ``owner``'s lease of the chat."""
        ...

    async def keep_if_pending(
        self, uow: UnitOfWork, chat_ids: Sequence[int], owner: str
    ) -> dict[int, bool]:
        """Whether each chat has a message still to send; where not, end ``owner``'s lease.

        Others are kept from taking the chats until ``uow`` ends.
        """
        ...

    async def release_all(self, uow: UnitOfWork, owner: str | None) -> None:
        """End every lease ``owner`` holds; None: everyone's."""
        ...

    async def waiting(self, uow: UnitOfWork, created_before: datetime, now: datetime) -> list[int]:
        """Chats with a row unsent since before ``created_before`` that no stored lease holds."""
        ...

    def unheld(self, chats: Sequence[int], now: datetime) -> list[int]:
        """Those of ``chats`` that no lease kept here holds at ``now``."""
        ...


class StoredLeases:
    """Leases in the database, shared by every worker that uses it."""

    stored = True

    def __init__(self, *, live_owners: bool = False) -> None:
        """``live_owners`` (PostgreSQL): every owner holds its owner lock while it lives.

        Then a dead worker's lease lapses at once, not when it expires (see
        :mod:`telesnap.storage.liveness`), and a worker that looks dead takes no chat.
        """
        self._live_owners = live_owners

    async def claim(
        self, uow: UnitOfWork, chat_id: int, owner: str, now: datetime, until: datetime
    ) -> bool:
        """Lease the chat to ``owner`` until ``until``, unless another owner's lease is live."""
        return await uow.outbox.claim(chat_id, owner, now, until, live_owners=self._live_owners)

    async def lease_of(
        self, uow: UnitOfWork, chat_id: int, owner: str, now: datetime
    ) -> datetime | None:
        """Until when ``owner`` holds the chat (None: it does not hold it now)."""
        return await uow.outbox.lease_of(chat_id, owner, now, live_owners=self._live_owners)

    async def release(self, uow: UnitOfWork, chat_id: int, owner: str) -> None:
        """End ``owner``'s lease of the chat (its pace is kept for the next sender)."""
        await uow.outbox.release(chat_id, owner)

    async def keep_if_pending(
        self, uow: UnitOfWork, chat_ids: Sequence[int], owner: str
    ) -> dict[int, bool]:
        """Whether each chat has a message still to send; where not, end ``owner``'s lease.

        The chats' rows are locked first (in one order): a worker trying to take one
        meanwhile waits, and then finds it free; one that tried before committed its
        board before, and the look that follows (a statement of its own, so it sees
        that board) keeps the chat. Two statements for all the chats ``owner`` holds.
        """
        chats = sorted(set(chat_ids))
        await uow.outbox.lock_senders(chats)
        more = await uow.outbox.release_unless_pending(chats, owner)
        for chat_id in chats:
            if chat_id not in more:  # not held by owner: nothing to release
                more[chat_id] = await uow.outbox.has_pending(chat_id)
        return more

    async def release_all(self, uow: UnitOfWork, owner: str | None) -> None:
        """End every lease ``owner`` holds; None: everyone's."""
        await uow.outbox.release_all(owner)

    async def waiting(self, uow: UnitOfWork, created_before: datetime, now: datetime) -> list[int]:
        """Chats with a row unsent since before ``created_before`` and no live (living) sender."""
        return await uow.outbox.chats_waiting(created_before, now, live_owners=self._live_owners)

    def unheld(self, chats: Sequence[int], now: datetime) -> list[int]:
        """All of them: the database's query already left the leased chats out."""
        return list(chats)


class MemoryLeases:
    """Leases kept in the process: right for the one process a SQLite database has."""

    stored = False

    def __init__(self) -> None:
        self._leases: dict[int, tuple[str, datetime]] = {}

    async def claim(
        self, uow: UnitOfWork | None, chat_id: int, owner: str, now: datetime, until: datetime
    ) -> bool:
        """Lease the chat to ``owner`` until ``until``, unless another owner's lease is live."""
        held = self._leases.get(chat_id)
        if held is not None and held[0] != owner and held[1] > now:
            return False
        self._leases[chat_id] = (owner, until)
        return True

    async def lease_of(
        self, uow: UnitOfWork | None, chat_id: int, owner: str, now: datetime
    ) -> datetime | None:
        """Until when ``owner`` holds the chat (None: it does not hold it now)."""
        held = self._leases.get(chat_id)
        if held is None or held[0] != owner or held[1] <= now:
            return None
        return held[1]

    async def release(self, uow: UnitOfWork | None, chat_id: int, owner: str) -> None:
        """End ``owner``'s lease of the chat."""
        held = self._leases.get(chat_id)
        if held is not None and held[0] == owner:
            del self._leases[chat_id]

    async def keep_if_pending(
        self, uow: UnitOfWork, chat_ids: Sequence[int], owner: str
    ) -> dict[int, bool]:
        """Whether each chat has a message still to send; where not, end ``owner``'s lease.

        Nothing to lock: no other process takes chats.
        """
        more = {}
        for chat_id in sorted(set(chat_ids)):
            more[chat_id] = await uow.outbox.has_pending(chat_id)
            if not more[chat_id]:
                await self.release(uow, chat_id, owner)
        return more

    async def release_all(self, uow: UnitOfWork, owner: str | None) -> None:
        """End every lease ``owner`` holds; None: everyone's (also those a stored row kept)."""
        if owner is None:
            self._leases.clear()
            await uow.outbox.release_all(None)  # rows a multi-worker run may have left
            return
        for chat_id in [chat for chat, held in self._leases.items() if held[0] == owner]:
            del self._leases[chat_id]

    async def waiting(self, uow: UnitOfWork, created_before: datetime, now: datetime) -> list[int]:
        """Chats with a row unsent since before ``created_before`` (leases: :meth:`unheld`)."""
        return await uow.outbox.chats_waiting(created_before, now)

    def unheld(self, chats: Sequence[int], now: datetime) -> list[int]:
        """Those of ``chats`` that no live lease here holds."""
        return [
            chat for chat in chats if (held := self._leases.get(chat)) is None or held[1] <= now
        ]
