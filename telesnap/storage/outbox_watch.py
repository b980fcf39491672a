"""What committed units of work did to the outbox: the rows they added, and rewrites.

The outbox's one writer (SQLite) need not read back its rows: they come here in commit order,
which is ``id`` order. Any other change to pending rows is a *rewrite*, after which rows kept
in memory must be read again; statements marked :data:`KEPT_BY_CALLER` are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction

from .models import OutboxMessage

__all__ = ["KEPT_BY_CALLER", "OutboxWatch", "note_added"]

KEPT_BY_CALLER = "telesnap_outbox_kept_by_caller"
"""Execution option: the statement changes rows whose copies its caller keeps up to date."""
_ADDED = "telesnap_outbox_added"
_REWRITTEN = "telesnap_outbox_rewritten"
_TABLE_NAME = OutboxMessage.__tablename__


class OutboxWatch:
    """Hands the rows each committed unit added to its listeners, and counts rewrites."""

    def __init__(self) -> None:
        self.rewrites = 0
        """How many committed units changed outbox rows otherwise than by adding them."""
        self._listeners: list[Callable[[Sequence[OutboxMessage]], None]] = []

    def listen(self, listener: Callable[[Sequence[OutboxMessage]], None]) -> None:
        """Call ``listener`` with the rows of every unit that commits new outbox rows."""
        self._listeners.append(listener)

    def committed(self, session: Session) -> None:
        """``session`` has committed: report what it did to the outbox."""
        info = session.info
        added: list[OutboxMessage] = info.pop(_ADDED, [])
        if info.pop(_REWRITTEN, False):
            self.rewrites += 1
        if added:
            for listener in self._listeners:
                listener(added)


def note_added(session: Session, row: OutboxMessage) -> None:
    """Record that ``row`` was added in ``session`` (reported once it commits)."""
    session.info.setdefault(_ADDED, []).append(row)


@event.listens_for(Session, "do_orm_execute")
def _bulk_write(state: ORMExecuteState) -> None:
    if not (state.is_update or state.is_delete) or state.execution_options.get(KEPT_BY_CALLER):
        return
    # An ORM statement names an annotated copy of the table: compare by name.
    table: Any = getattr(state.statement, "table", None)
    if getattr(table, "name", None) == _TABLE_NAME:
        state.session.info[_REWRITTEN] = True


@event.listens_for(Session, "before_flush")
def _changed_rows(session: Session, _context: UOWTransaction, _instances: Any) -> None:
    added = session.info.get(_ADDED, ())
    for row in (*session.dirty, *session.deleted):
        if isinstance(row, OutboxMessage) and not any(row is mine for mine in added):
            session.info[_REWRITTEN] = True
            return
