"""The durable outbox: messages a change must show, and each chat's shared flood-limit state."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, RowId, UtcDateTime, utc_now

__all__ = ["OutboxMessage", "OutboxSender", "OutboxState"]


class OutboxState(StrEnum):
    """Where an outbox message stands."""

    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"
    """Telegram refused it for good (or it could not be built): set aside, logged."""


class OutboxMessage(Base):
    """One message a committed change must show, written in that change's transaction.

    The bot renders ``payload`` at send time; a chat's rows go in ``id`` order. ``shown_at``:
    reaction times start from a board's first showing, and a game's newest shown row is its
    board on screen, across restarts and workers.
    """

    __tablename__ = "outbox_messages"
    __table_args__ = (Index("ix_outbox_messages_state_chat_id", "state", "chat_id", "id"),)

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    thread_id: Mapped[int] = mapped_column(BigInteger, default=0)
    kind: Mapped[str] = mapped_column(String(16))
    game_id: Mapped[int | None] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), index=True
    )
    board_version: Mapped[int | None] = mapped_column(Integer)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[str] = mapped_column(String(8), default=OutboxState.PENDING.value)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    done_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[str | None] = mapped_column(String(200))
    shown_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """When the bot got Telegram's reply showing this row's board (None: not a view)."""
    bared: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Whether the buttons of the board message showing this row came off (a newer replaced it)."""


class OutboxSender(Base):
    """A chat's flood-limit windows, shared by the workers that send to it (PostgreSQL).

    ``pace`` is opaque here: ``telesnap/coordination/postgres.py`` changes it by compare-and-swap.
    """

    __tablename__ = "outbox_senders"

    chat_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    pace: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
