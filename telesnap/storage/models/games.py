"""Games, their seated players, and their history (one row per engine operation)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, RowId, UtcDateTime, utc_now

__all__ = ["ACTIVE_STATUSES", "Game", "GameOperation", "GamePlayer", "GameStatus"]


class GameStatus(StrEnum):
    """The life cycle of a game: lobby, running, then one of the three endings."""

    LOBBY = "lobby"
    RUNNING = "running"
    FINISHED = "finished"
    ABANDONED = "abandoned"
    CANCELLED = "cancelled"


ACTIVE_STATUSES = (GameStatus.LOBBY, GameStatus.RUNNING)
"""At most one game per chat topic is in one of these statuses."""

_ACTIVE_CONDITION = "status IN ('lobby', 'running')"


class Game(Base):
    """One game in one chat topic, from its lobby to its end."""

    __tablename__ = "games"
    __table_args__ = (
        CheckConstraint(
            "status IN ('lobby', 'running', 'finished', 'abandoned', 'cancelled')",
            name="status_is_known",
        ),
        Index(
            "uq_games_one_active_per_topic",
            "chat_id",
            "thread_id",
            unique=True,
            sqlite_where=text(_ACTIVE_CONDITION),
            postgresql_where=text(_ACTIVE_CONDITION),
        ),
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("chats.id", ondelete="CASCADE"))
    thread_id: Mapped[int] = mapped_column(BigInteger, default=0)
    status: Mapped[str] = mapped_column(String(16), default=GameStatus.LOBBY.value)
    creator_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id"))
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    seed: Mapped[int | None] = mapped_column(BigInteger)
    lobby_message_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    end_reason: Mapped[str | None] = mapped_column(String(64))
    winner_ids: Mapped[list[int] | None] = mapped_column(JSON)

    @property
    def is_active(self) -> bool:
        """Whether the game is still in its lobby or running."""
        return self.status in ACTIVE_STATUSES


class GamePlayer(Base):
    """A seat in a game; seats are numbered in join order."""

    __tablename__ = "game_players"
    __table_args__ = (UniqueConstraint("game_id", "user_id"),)

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id"))
    joined_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    left_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    leave_reason: Mapped[str | None] = mapped_column(String(64))
    afk_streak: Mapped[int] = mapped_column(Integer, default=0)
    afk_total: Mapped[int] = mapped_column(Integer, default=0)
    shown_name: Mapped[str | None] = mapped_column(String(64))
    """Set when the player erased their data: the seat shows it, not their name of today."""


class GameOperation(Base):
    """One engine operation of a game's history, numbered ``seq`` = 1, 2, 3, ..."""

    __tablename__ = "game_operations"
    __table_args__ = (Index(None, "user_id", "kind"),)

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    recorded_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    user_id: Mapped[int | None] = mapped_column(BigInteger)
    update_id: Mapped[int | None] = mapped_column(BigInteger)
    receipt_wall_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    receipt_stamp_ns: Mapped[int | None] = mapped_column(BigInteger)
    """The update's receipt stamp (wall-clock ns), taken by ``receipt_host_id``."""
    receipt_host_id: Mapped[str | None] = mapped_column(String(64))
    reaction_ms: Mapped[int | None] = mapped_column(Integer)
