"""Who may manage a topic's game: its creator, or one of the chat's admins.

A manager's action (start, end, kick, a settings change) is handed an
:data:`AdminCheck` up front, and runs once: the service asks it only when the
actor is not the game's creator, and asks it at most once (a
:class:`ManagerCheck` keeps the answer). The services ask before they take the
topic's lock where they can, so no transaction waits on the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

AdminCheck = Callable[[], Awaitable[bool]]
"""Answers whether the acting user is one of the chat's admins (the bot asks Telegram)."""


class ManagerCheck:
    """Whether one actor may manage a game: the creator may; anyone else if an admin.

    The admin check is awaited the first time a game created by someone else is
    asked about, and its answer is kept for the rest of the action.
    """

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
