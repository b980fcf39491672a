"""The inbox: every update the bot received, stored before Telegram is told it arrived.

One row per ``update_id``. A row is pending until its effects are committed or its handlers
are done (``processed_at`` set); processed rows make a second application a no-op.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UtcDateTime, utc_now

__all__ = ["NO_CHAT", "InboxUpdate"]

NO_CHAT = 0
"""The ``chat_id`` of an update that belongs to no chat (handled in a line of its own)."""

_PENDING = text("processed_at IS NULL")


class InboxUpdate(Base):
    """A received Telegram update: its topic, its receipt stamp, and whether it is handled."""

    __tablename__ = "inbox"
    __table_args__ = (
        Index(
            "ix_inbox_pending",
            "chat_id",
            "thread_id",
            "update_id",
            postgresql_where=_PENDING,
            sqlite_where=_PENDING,
        ),
        Index(None, "processed_at"),
    )

    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    chat_id: Mapped[int] = mapped_column(BigInteger, default=NO_CHAT)
    thread_id: Mapped[int] = mapped_column(BigInteger, default=0)
    is_call: Mapped[bool] = mapped_column(Boolean, default=False)
    """A Snap call: handled at once, not in its topic's line (races go by stamps)."""
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """The update as Telegram sent it (None: a mark of an update applied without the inbox)."""
    stamp_ns: Mapped[int | None] = mapped_column(BigInteger)
    """The receipt stamp: wall-clock ns when the update entered the bot."""
    host_id: Mapped[str | None] = mapped_column(String(64))
    """Which host took the stamp."""
    received_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    processed_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
