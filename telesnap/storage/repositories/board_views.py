"""The board messages shown for each game, by board version (reaction times start there)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import BoardView
from ._dialect import per_dialect

__all__ = ["BoardViewRepository", "ShownBoard"]


@dataclass(frozen=True, slots=True)
class ShownBoard:
    """One board message that reached Telegram: the game, its board version, when."""

    game_id: int
    version: int
    message_id: int
    shown_at: datetime


_TABLE: Table = cast("Table", BoardView.__table__)


@per_dialect
def _record(insert: Callable[[Any], Any]) -> Any:
    """Insert the views given as parameters; a version shown already is left as it was."""
    # On the table: the ORM's bulk insert machinery costs more than the insert itself.
    return (
        insert(_TABLE)
        .on_conflict_do_nothing(index_elements=[BoardView.game_id, BoardView.version])
        .returning(BoardView.game_id, BoardView.version)
    )


_SHOWN_AGAIN = (
    update(_TABLE)
    .where(
        _TABLE.c.game_id == bindparam("shown_game"),
        _TABLE.c.version == bindparam("shown_version"),
        _TABLE.c.message_id < bindparam("shown_message"),
    )
    .values(message_id=bindparam("shown_message"))
)
"""A version shown again in a newer message: that message is the version's board now."""


class BoardViewRepository:
    """When each version of a game's board reached Telegram, and in which message."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def record(self, views: Sequence[ShownBoard]) -> set[tuple[int, int]]:
        """Store that each message showed its board version from its ``shown_at``.

        Reaction times start from the first showing of a version. A later message
        showing the same version again (a wrong call's board, the table posted again
        after a restart) becomes the version's message: the one whose buttons are
        live, to take off or to edit next. Returns the ``(game_id, version)`` of the
        views stored now (the first to show their version).
        """
        if not views:
            return set()
        rows = [
            {
                "game_id": view.game_id,
                "version": view.version,
                "message_id": view.message_id,
                "shown_at": view.shown_at,
            }
            for view in views
        ]
        result = await self._session.execute(_record(self._session), rows)
        stored = {(row.game_id, row.version) for row in result}
        again = [
            {
                "shown_game": row["game_id"],
                "shown_version": row["version"],
                "shown_message": row["message_id"],
            }
            for row in rows
            if (row["game_id"], row["version"]) not in stored
        ]
        if again:
            await self._session.execute(_SHOWN_AGAIN, again)
        return stored

    async def shown_at(self, game_id: int, version: int) -> datetime | None:
        """When board ``version`` of the game was first shown, or None if it never was."""
        statement = select(BoardView.shown_at).where(
            BoardView.game_id == game_id, BoardView.version == version
        )
        shown: datetime | None = await self._session.scalar(statement)
        return shown

    async def newest(self, game_id: int) -> ShownBoard | None:
        """The game's newest board shown so far, and its message (None before any)."""
        statement = (
            select(BoardView)
            .where(BoardView.game_id == game_id)
            .order_by(BoardView.version.desc())
            .limit(1)
        )
        row = await self._session.scalar(statement)
        if row is None:
            return None
        return ShownBoard(row.game_id, row.version, row.message_id, row.shown_at)

    async def newest_version(self, game_id: int) -> int | None:
        """The highest board version of the game shown so far (None before any)."""
        statement = select(func.max(BoardView.version)).where(BoardView.game_id == game_id)
        newest: int | None = await self._session.scalar(statement)
        return newest
