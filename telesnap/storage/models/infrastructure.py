"""Bookkeeping tables: timers (the received updates are in :mod:`.inbox`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, RowId, UtcDateTime

__all__ = ["Timer"]


class Timer(Base):
    """Something to do at ``due_at`` (a turn timeout, a lobby expiry...); fired once."""

    __tablename__ = "timers"

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    game_id: Mapped[int | None] = mapped_column(RowId, ForeignKey("games.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    thread_id: Mapped[int] = mapped_column(BigInteger, default=0)
    kind: Mapped[str] = mapped_column(String(32))
    due_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    fired_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
