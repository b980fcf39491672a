"""The storage layer's own errors, mapped from SQLAlchemy's at the repository boundary."""

from __future__ import annotations

__all__ = ["ActiveGameExistsError", "PlayerAlreadySeatedError", "ReadOnlyError", "StorageError"]


class StorageError(Exception):
    """Base class of the errors the storage layer raises on purpose."""


class ActiveGameExistsError(StorageError):
    """The chat topic already has a game in its lobby or running."""

    def __init__(self, chat_id: int, thread_id: int) -> None:
        super().__init__(f"chat {chat_id} topic {thread_id} already has an active game")
        self.chat_id = chat_id
        self.thread_id = thread_id


class PlayerAlreadySeatedError(StorageError):
    """The user already has a seat in the game."""

    def __init__(self, game_id: int, user_id: int) -> None:
        super().__init__(f"user {user_id} is already seated in game {game_id}")
        self.game_id = game_id
        self.user_id = user_id


class ReadOnlyError(StorageError):
    """A read-only unit of work was asked to write: a programming error, refused before SQL."""
