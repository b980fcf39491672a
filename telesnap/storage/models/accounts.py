"""Who plays and where: Telegram users, chats, and per-chat (or per-topic) settings."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, CheckConstraint, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UtcDateTime, utc_now

__all__ = ["CHAT_TYPES", "WHOLE_CHAT", "Chat", "ChatSettings", "User"]

CHAT_TYPES = ("private", "group", "supergroup", "channel")
WHOLE_CHAT = 0
"""The ``thread_id`` that means the whole chat rather than one forum topic."""


class User(Base):
    """A Telegram user, keyed by their Telegram id, with the latest names we saw."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    first_name: Mapped[str] = mapped_column(String(256))
    last_name: Mapped[str | None] = mapped_column(String(256))
    username: Mapped[str | None] = mapped_column(String(64))
    language_code: Mapped[str | None] = mapped_column(String(35))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now, onupdate=utc_now)


class Chat(Base):
    """A Telegram chat the bot has seen; ``is_forum`` chats have topics."""

    __tablename__ = "chats"
    __table_args__ = (
        CheckConstraint(
            "type IN ('private', 'group', 'supergroup', 'channel')", name="type_is_known"
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(String(16))
    title: Mapped[str | None] = mapped_column(String(256))
    is_forum: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    removed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, index=True)
    """When the bot was removed from the chat (None while it is a member): the chat is
    erased once its retention period has passed."""


class ChatSettings(Base):
    """The settings a chat (``thread_id`` 0) or one of its topics has changed from the defaults."""

    __tablename__ = "chat_settings"

    chat_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True
    )
    thread_id: Mapped[int] = mapped_column(
        BigInteger, primary_key=True, autoincrement=False, default=WHOLE_CHAT
    )
    values: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now, onupdate=utc_now)
