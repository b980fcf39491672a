"""Snap races: one row per race, written with its first correct call, decided once."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, RowId, UtcDateTime, utc_now

__all__ = ["Race", "RaceState"]


class RaceState(StrEnum):
    """Where a race stands: collecting calls, decided, or ended without a decision."""

    OPEN = "open"
    DECIDED = "decided"
    ENDED = "ended"
    """The game ended (``/endgame``, idle) before the race was decided."""


_OPEN_CONDITION = "state = 'open'"


class Race(Base):
    """A Snap race of a game: where it is, when its tie window closes, and how it ended.

    The deadline (the earliest call's stamp plus the tie window) is kept as wall-clock ns,
    comparable across hosts whose clocks agree, and as the same moment in ``deadline_at``.
    """

    __tablename__ = "races"
    __table_args__ = (
        Index(
            "uq_races_one_open_per_game",
            "game_id",
            unique=True,
            sqlite_where=text(_OPEN_CONDITION),
            postgresql_where=text(_OPEN_CONDITION),
        ),
        # Every worker looks for overdue open races (``RaceRepository.list_overdue``).
        Index(
            "ix_races_open_by_deadline",
            "deadline_ns",
            sqlite_where=text(_OPEN_CONDITION),
            postgresql_where=text(_OPEN_CONDITION),
        ),
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), index=True
    )
    chat_id: Mapped[int] = mapped_column(BigInteger)
    thread_id: Mapped[int] = mapped_column(BigInteger, default=0)
    state: Mapped[str] = mapped_column(String(16), default=RaceState.OPEN.value)
    opened_seq: Mapped[int] = mapped_column(Integer)
    """The history ``seq`` of the race's first correct call."""
    deadline_ns: Mapped[int] = mapped_column(BigInteger)
    deadline_at: Mapped[datetime] = mapped_column(UtcDateTime)
    opened_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    decided_seq: Mapped[int | None] = mapped_column(Integer)
    """The history ``seq`` of the race's ``RaceResolved`` operation, once decided."""
    closed_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
