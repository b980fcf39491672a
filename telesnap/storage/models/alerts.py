"""Who asked to hear of new lobbies, and who can be written to privately."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UtcDateTime, utc_now

__all__ = ["DirectChat", "LobbyAlert"]


class LobbyAlert(Base):
    """A person who asked (``/notify``) for a private message when a lobby opens in a chat."""

    __tablename__ = "lobby_alerts"

    chat_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        BigInteger, primary_key=True, autoincrement=False, index=True
    )
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)


class DirectChat(Base):
    """A person who started the bot privately and has not blocked it: the bot may write to them.

    Telegram refuses a bot's first message to anyone who never started it.
    """

    __tablename__ = "direct_chats"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    opened_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
