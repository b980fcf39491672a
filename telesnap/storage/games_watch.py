"""Whether a game row kept in memory may be stale: every write to games made otherwise counts.

With one process on the database (SQLite), a running game's row can serve its topic's next
change (:meth:`~telesnap.services.play.store.GameStore.kept_row`): right only while nothing
else writes it.
"""

from __future__ import annotations

import weakref
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction

from .models import Chat, Game

__all__ = ["foreign_writes", "keep", "let_go"]

_TABLES = {Game.__tablename__, Chat.__tablename__}
_kept: weakref.WeakSet[Game] = weakref.WeakSet()
_writes = 0


def foreign_writes() -> int:
    """How many flushes and statements so far wrote games other than through a kept row."""
    return _writes


def keep(row: Game) -> None:
    """``row`` is kept in memory: its own writes do not count."""
    _kept.add(row)


def let_go(row: Game) -> None:
    """``row`` is no longer kept: its writes count again."""
    _kept.discard(row)


def _counted() -> None:
    global _writes
    _writes += 1


@event.listens_for(Session, "do_orm_execute")
def _statement(state: ORMExecuteState) -> None:
    if not (state.is_update or state.is_delete):
        return
    table: Any = getattr(state.statement, "table", None)
    if getattr(table, "name", None) in _TABLES:  # deleting a chat deletes its games
        _counted()


@event.listens_for(Session, "before_flush")
def _flushed(session: Session, _context: UOWTransaction, _instances: Any) -> None:
    for row in session.deleted:
        if isinstance(row, Game | Chat):
            _counted()
            return
    for row in session.dirty:
        if isinstance(row, Game) and row not in _kept and session.is_modified(row):
            _counted()
            return
