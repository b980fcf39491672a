"""How this process shares the work with other workers: chosen once, at start, by the database.

SQLite has one bot process: everything the workers would share is kept in its
memory. PostgreSQL may have several workers: they share it through the database.

What differs, one process first, then workers:

- a topic's line and a Snap call (``storage/claims.py``): in memory; advisory
  locks on one connection, with LISTEN to wake the others;
- liveness and the cold start (``storage/liveness.py``): always a cold start;
  each worker's owner lock;
- a chat's sender lease (``services/outbox/leases.py``): in memory; a row per
  chat, lapsing with its owner's lock;
- a chat's unsent rows: handed over as they commit (``storage/outbox_watch.py``);
  read back from the database;
- the flood-limit windows (``bot/delivery/slots.py``): in the lanes; rows that
  every worker counts in;
- the cached games (``services/play/store.py``): trusted; checked against the
  stored history.

:class:`~telesnap.app.BotRunner` asks :func:`coordination_for` once and hands
each part to the component that uses it; nothing else looks at the database's
kind to decide how to share.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from .bot.delivery.slots import FloodLimits, StoredSlots, StoredStates
from .services.outbox.leases import MemoryLeases, StoredLeases
from .storage.claims import LocalClaims, PostgresClaims
from .storage.database import is_sqlite
from .storage.liveness import LocalLiveness, PostgresLiveness
from .storage.outbox_watch import OutboxWatch
from .storage.uow import UnitsOfWork


@dataclass(frozen=True)
class Coordination:
    """The parts that differ between one process and several workers (see the module)."""

    engine: AsyncEngine
    shared: bool
    """Whether other workers may share the database (PostgreSQL)."""
    claims: LocalClaims | PostgresClaims
    leases: MemoryLeases | StoredLeases
    watch: OutboxWatch | None
    """The rows committed, handed over (one process only: it is the outbox's one writer)."""

    def liveness(self, owner: str | None = None) -> LocalLiveness | PostgresLiveness:
        """Who else is alive; ``owner`` is the name this worker leases chats under."""
        return PostgresLiveness(self.engine, owner) if self.shared else LocalLiveness()

    def slots(
        self, limits: FloodLimits, states: StoredStates, clock: Callable[[], float] = time.time
    ) -> StoredSlots | None:
        """The flood-limit windows all workers count in (None: the lanes keep their own)."""
        return StoredSlots(limits, states, clock) if self.shared else None


def coordination_for(engine: AsyncEngine, units: UnitsOfWork) -> Coordination:
    """What suits ``engine``'s database: memory for SQLite, the database for PostgreSQL."""
    if is_sqlite(engine):
        return Coordination(engine, False, LocalClaims(), MemoryLeases(), units.outbox_watch)
    return Coordination(engine, True, PostgresClaims(engine), StoredLeases(live_owners=True), None)
