"""Who may manage a topic's game: its creator, or one of the chat's admins.

The admin check is asked only when the actor is not the creator, at most once per action,
and before the topic's lock where possible, so no transaction waits on the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

AdminCheck = Callable[[], Awaitable[bool]]
"""Answers whether the acting user is one of the chat's admins (the bot asks Telegram)."""


class ManagerCheck:
    """Whether one actor may manage a game: the creator, or an admin (asked at most once)."""

    def __init__(self, actor_id: int, is_admin: AdminCheck) -> None:
        self._actor_id = actor_id
        self._is_admin = is_admin
        self._answer: bool | None = None

    async def may_manage(self, creator_id: int) -> bool:
        """Whether the actor may manage a game whose creator is ``creator_id``."""
        if creator_id == self._actor_id:
            return True
        if self._answer is None:
            self._answer = await self._is_admin()
        return self._answer
