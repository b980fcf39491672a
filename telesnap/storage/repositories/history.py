"""A game's history: the engine's operations, one row each, numbered 1, 2, 3, ...

The one place an operation becomes a row and back (:func:`~telesnap.game.operation_to_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...game import Operation, operation_from_json, operation_to_json
from ..models import Game, GameOperation, utc_now

__all__ = ["HistoryRepository", "OperationRecord"]

_APPEND = insert(cast("Table", GameOperation.__table__))
"""A Core insert on the table, built once: the ORM's insert machinery costs more than the
insert itself, and every move runs it."""
_LAST_SEQ = select(func.max(GameOperation.seq)).where(GameOperation.game_id == bindparam("game_id"))
"""Built once: with several workers every change asks it."""


@dataclass(frozen=True)
class OperationRecord:
    """One operation of a game's history: what the engine did, and the update that caused it.

    The rest is the triggering update's metadata, all optional: timers have none.
    """

    operation: Operation
    user_id: int | None = None
    update_id: int | None = None
    receipt_wall_at: datetime | None = None
    receipt_stamp_ns: int | None = None
    receipt_host_id: str | None = None
    reaction_ms: int | None = None
    recorded_at: datetime | None = None
    """When it was stored (read back; :meth:`HistoryRepository.append` sets it)."""


class HistoryRepository:
    """Append and load the operations of a game."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def append(
        self,
        game_id: int,
        records: Sequence[OperationRecord],
        *,
        after_seq: int | None = None,
        recorded_at: datetime | None = None,
    ) -> list[int]:
        """Append ``records`` with the next consecutive ``seq`` numbers; return those numbers.

        Takes the game's row lock first, so concurrent appends serialise instead of colliding on
        ``seq``; a caller already holding it passes the last ``seq`` as ``after_seq``.
        """
        if after_seq is None:
            await self._session.execute(select(Game.id).where(Game.id == game_id).with_for_update())
            after_seq = await self.last_seq(game_id)
        if not records:
            return []
        recorded_at = recorded_at or utc_now()
        seqs = list(range(after_seq + 1, after_seq + 1 + len(records)))
        rows = [
            {
                "game_id": game_id,
                "seq": seq,
                "kind": record.operation.kind,
                "payload": operation_to_json(record.operation),
                "recorded_at": recorded_at,
                "user_id": record.user_id,
                "update_id": record.update_id,
                "receipt_wall_at": record.receipt_wall_at,
                "receipt_stamp_ns": record.receipt_stamp_ns,
                "receipt_host_id": record.receipt_host_id,
                "reaction_ms": record.reaction_ms,
            }
            for seq, record in zip(seqs, records, strict=True)
        ]
        await self._session.execute(_APPEND, rows)
        return seqs

    async def last_seq(self, game_id: int) -> int:
        """Return the ``seq`` of the game's last operation (0 if it has none)."""
        return int(await self._session.scalar(_LAST_SEQ, {"game_id": game_id}) or 0)

    async def load(self, game_id: int, after_seq: int = 0) -> list[GameOperation]:
        """The game's rows with ``seq`` > ``after_seq`` as stored (raw JSON, e.g. a replay file)."""
        statement = (
            select(GameOperation)
            .where(GameOperation.game_id == game_id, GameOperation.seq > after_seq)
            .order_by(GameOperation.seq)
        )
        return list(await self._session.scalars(statement))

    async def operations(self, game_id: int, after_seq: int = 0) -> list[OperationRecord]:
        """The game's operations with ``seq`` > ``after_seq``, in ``seq`` order, with metadata.

        A stored operation that does not read raises :class:`~telesnap.game.SnapError`.
        """
        return [
            OperationRecord(
                operation=operation_from_json(row.payload),
                user_id=row.user_id,
                update_id=row.update_id,
                receipt_wall_at=row.receipt_wall_at,
                receipt_stamp_ns=row.receipt_stamp_ns,
                receipt_host_id=row.receipt_host_id,
                reaction_ms=row.reaction_ms,
                recorded_at=row.recorded_at,
            )
            for row in await self.load(game_id, after_seq)
        ]
