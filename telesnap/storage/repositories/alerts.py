"""Lobby alerts (``/notify``) and the private chats the bot may write to."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import Chat, DirectChat, LobbyAlert
from ._dialect import bulk_delete

__all__ = ["AlertRepository"]


class AlertRepository:
    """Who wants a private message when a lobby opens in a chat, and who can receive one."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def subscribe(self, chat_id: int, user_id: int) -> bool:
        """Add the person to the chat's alerts; False if they were on it already."""
        if await self.is_subscribed(chat_id, user_id):
            return False
        self._session.add(LobbyAlert(chat_id=chat_id, user_id=user_id))
        await self._session.flush()
        return True

    async def unsubscribe(self, chat_id: int, user_id: int) -> bool:
        """Take the person off the chat's alerts; False if they were not on it."""
        statement = delete(LobbyAlert).where(
            LobbyAlert.chat_id == chat_id, LobbyAlert.user_id == user_id
        )
        return await bulk_delete(self._session, statement) > 0

    async def is_subscribed(self, chat_id: int, user_id: int) -> bool:
        """Whether the person is on the chat's alerts."""
        statement = select(LobbyAlert.user_id).where(
            LobbyAlert.chat_id == chat_id, LobbyAlert.user_id == user_id
        )
        return await self._session.scalar(statement) is not None

    async def recipients(self, chat_id: int) -> list[int]:
        """The chat's subscribers the bot can write to privately, in the order they asked."""
        statement = (
            select(LobbyAlert.user_id)
            .join(DirectChat, DirectChat.user_id == LobbyAlert.user_id)
            .where(LobbyAlert.chat_id == chat_id)
            .order_by(LobbyAlert.created_at, LobbyAlert.user_id)
        )
        return list(await self._session.scalars(statement))

    async def chats_of(self, user_id: int) -> list[str | None]:
        """The titles of the chats the person asked to hear from (None: a chat with no title)."""
        statement = (
            select(Chat.title)
            .join(LobbyAlert, LobbyAlert.chat_id == Chat.id)
            .where(LobbyAlert.user_id == user_id)
            .order_by(LobbyAlert.created_at, Chat.id)
        )
        return list(await self._session.scalars(statement))

    async def open_direct(self, user_id: int) -> bool:
        """The person started the bot privately (or unblocked it); False if known already."""
        if await self.has_direct(user_id):
            return False
        self._session.add(DirectChat(user_id=user_id))
        await self._session.flush()
        return True

    async def has_direct(self, user_id: int) -> bool:
        """Whether the bot may write to the person privately."""
        statement = select(DirectChat.user_id).where(DirectChat.user_id == user_id)
        return await self._session.scalar(statement) is not None

    async def close_direct(self, user_id: int) -> int:
        """The person blocked the bot: forget their private chat and their alerts; how many."""
        await bulk_delete(self._session, delete(DirectChat).where(DirectChat.user_id == user_id))
        statement = delete(LobbyAlert).where(LobbyAlert.user_id == user_id)
        return await bulk_delete(self._session, statement)

    async def forget_chat(self, chat_id: int) -> int:
        """Erase the chat's alerts; how many went."""
        statement = delete(LobbyAlert).where(LobbyAlert.chat_id == chat_id)
        return await bulk_delete(self._session, statement)
