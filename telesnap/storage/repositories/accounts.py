"""Users, chats and chat settings: upserted with the latest names Telegram sent."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import WHOLE_CHAT, Chat, ChatSettings, User, utc_now
from ._dialect import upsert_insert

__all__ = ["ChatRepository", "ChatSettingsRepository", "UserRepository"]

_FRESH = {"populate_existing": True}


class UserRepository:
    """Telegram users."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def upsert(
        self,
        user_id: int,
        first_name: str,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = None,
    ) -> User:
        """Insert the user or update their names; return the stored row."""
        names = {
            "first_name": first_name,
            "last_name": last_name,
            "username": username,
            "language_code": language_code,
        }
        now = utc_now()
        statement = upsert_insert(self._session, User).values(
            id=user_id, created_at=now, updated_at=now, **names
        )
        statement = statement.on_conflict_do_update(
            index_elements=[User.id], set_={**names, "updated_at": now}
        )
        result = await self._session.scalars(statement.returning(User), execution_options=_FRESH)
        return result.one()

    async def get(self, user_id: int) -> User | None:
        """Return the user, or None if the bot never saw them."""
        return await self._session.get(User, user_id)

    async def get_many(self, user_ids: Collection[int]) -> dict[int, User]:
        """The users the bot saw among ``user_ids``, by id, in one query."""
        if not user_ids:
            return {}
        users = await self._session.scalars(select(User).where(User.id.in_(set(user_ids))))
        return {user.id: user for user in users}


class ChatRepository:
    """Telegram chats."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def upsert(
        self, chat_id: int, chat_type: str, title: str | None = None, is_forum: bool = False
    ) -> Chat:
        """Insert the chat or update its type, title and forum flag; return the stored row."""
        fields = {"type": chat_type, "title": title, "is_forum": is_forum}
        statement = upsert_insert(self._session, Chat).values(
            id=chat_id, created_at=utc_now(), **fields
        )
        statement = statement.on_conflict_do_update(index_elements=[Chat.id], set_=fields)
        result = await self._session.scalars(statement.returning(Chat), execution_options=_FRESH)
        return result.one()

    async def get(self, chat_id: int) -> Chat | None:
        """Return the chat, or None if the bot never saw it."""
        return await self._session.get(Chat, chat_id)


class ChatSettingsRepository:
    """The settings a chat or topic changed from the defaults (``thread_id`` 0: whole chat)."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def get_values(self, chat_id: int, thread_id: int = WHOLE_CHAT) -> dict[str, Any]:
        """Return the stored values of exactly this chat topic ({} if none)."""
        row = await self._session.scalar(
            select(ChatSettings).where(
                ChatSettings.chat_id == chat_id, ChatSettings.thread_id == thread_id
            ),
            execution_options=_FRESH,
        )
        return dict(row.values) if row is not None else {}

    async def values_to_change(self, chat_id: int, thread_id: int = WHOLE_CHAT) -> dict[str, Any]:
        """Lock this chat topic's settings row (made if missing) and return its values.

        Concurrent changes then serialise (as on SQLite anyway): none is lost under READ COMMITTED.
        """
        await self._session.execute(
            upsert_insert(self._session, ChatSettings)
            .values(chat_id=chat_id, thread_id=thread_id, values={}, updated_at=utc_now())
            .on_conflict_do_nothing(index_elements=[ChatSettings.chat_id, ChatSettings.thread_id])
        )
        row = await self._session.scalar(
            select(ChatSettings)
            .where(ChatSettings.chat_id == chat_id, ChatSettings.thread_id == thread_id)
            .with_for_update(),
            execution_options=_FRESH,
        )
        return dict(row.values) if row is not None else {}

    async def get_effective_values(self, chat_id: int, thread_id: int) -> dict[str, Any]:
        """Return the whole chat's values overridden by the topic's own ones."""
        values = await self.get_values(chat_id, WHOLE_CHAT)
        if thread_id != WHOLE_CHAT:
            values.update(await self.get_values(chat_id, thread_id))
        return values

    async def save_values(self, chat_id: int, thread_id: int, values: dict[str, Any]) -> None:
        """Replace the stored values of this chat topic with ``values``."""
        now = utc_now()
        statement = upsert_insert(self._session, ChatSettings).values(
            chat_id=chat_id, thread_id=thread_id, values=dict(values), updated_at=now
        )
        statement = statement.on_conflict_do_update(
            index_elements=[ChatSettings.chat_id, ChatSettings.thread_id],
            set_={"values": dict(values), "updated_at": now},
        )
        await self._session.execute(statement)
