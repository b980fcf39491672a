"""How the workers share the work: one protocol, chosen once at start by the database.

SQLite has one bot process, so everything is decided in its memory
(:class:`~.local.LocalCoordination`). PostgreSQL may have several workers: they coordinate
through advisory locks and LISTEN on one connection each keeps for its life
(:class:`~.postgres.PostgresCoordination`), so a worker killed with ``-9`` lets go of
everything it held the moment PostgreSQL drops its connection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from ..storage.database import is_sqlite
from ..storage.repositories import StoredElsewhere
from .local import LocalCoordination
from .postgres import PostgresCoordination

__all__ = ["Coordination", "LocalCoordination", "PostgresCoordination", "coordination_for"]

PaceState = dict[str, Any]
"""A chat's flood-limit windows as JSON (opaque here: see ``bot/delivery/pace.py``)."""


class Coordination(Protocol):
    """What the workers on one database share, and how (see the module)."""

    shared: bool
    """Whether other workers may share the database (their claims, leases, pledges)."""

    @property
    def origin(self) -> str:
        """The name of this worker in the wake-ups its stores send (it ignores its own)."""
        ...

    async def start(
        self,
        wake: Callable[[StoredElsewhere | None], None],
        rows_written: Callable[[int], None] = lambda chat: None,
    ) -> bool:
        """Join the workers and listen for wake-ups; True: a cold start (nobody else alive).

        Only a cold start resumes the games; it holds the others back in their ``start`` until
        :meth:`joined`. ``wake`` hears of each update another worker stored (None: wake-ups may
        have been missed, look at the inbox); ``rows_written(chat_id)`` of committed outbox rows.
        """
        ...

    async def joined(self) -> None:
        """After a cold start's resume: let the other workers start."""
        ...

    async def try_topic(self, topic: tuple[int, int]) -> bool:
        """Claim a topic's line of updates; False if another worker holds it."""
        ...

    async def release_topic(self, topic: tuple[int, int]) -> None:
        """Give a topic's line back."""
        ...

    async def try_call(self, update_id: int) -> bool:
        """Claim one Snap call; False if another worker holds it."""
        ...

    async def release_call(self, update_id: int) -> None:
        """Give a call back."""
        ...

    async def unprocessed(self, update_ids: Sequence[int]) -> set[int]:
        """Of updates this worker stored and claimed, those still pending (handled nowhere)."""
        ...

    async def try_chat(self, chat_id: int) -> bool:
        """Lease the sending of a chat's outbox rows; False if another worker holds it."""
        ...

    async def release_chat(self, chat_id: int) -> None:
        """Give a chat's lease back."""
        ...

    def holds_chat(self, chat_id: int) -> bool:
        """Whether this worker still holds the chat's lease (a lost connection lost it)."""
        ...

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of press ``query_id``; False if a live worker has it."""
        ...

    async def release_pledge(self, query_id: str) -> None:
        """Let press ``query_id`` go (it expired)."""
        ...

    async def load_pace(self, chat_id: int) -> PaceState:
        """The chat's shared flood-limit state (empty: none stored)."""
        ...

    async def swap_pace(self, chat_id: int, seen: PaceState, new: PaceState) -> bool:
        """Store ``new`` unless another worker changed the state since it read ``seen``."""
        ...

    def bot_share(self) -> float:
        """The share of the bot-wide flood limit this worker may use (1.0 alone, 0: none yet)."""
        ...

    async def ping(self) -> None:
        """Check that the coordination answers (the connection, on PostgreSQL)."""
        ...

    async def close(self) -> None:
        """Let go of everything held; the other workers see this one gone."""
        ...


def coordination_for(engine: AsyncEngine) -> LocalCoordination | PostgresCoordination:
    """What suits ``engine``'s database: memory for SQLite, the database for PostgreSQL."""
    return LocalCoordination() if is_sqlite(engine) else PostgresCoordination(engine)
