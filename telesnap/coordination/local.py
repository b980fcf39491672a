"""One process (SQLite): every claim, lease and pledge is a set in memory, every start cold."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..storage.repositories import StoredElsewhere


class LocalCoordination:
    """The coordination of the one process a SQLite database has."""

    shared = False

    def __init__(self) -> None:
        self._topics: set[tuple[int, int]] = set()
        self._calls: set[int] = set()
        self._chats: set[int] = set()
        self._pledges: set[str] = set()

    @property
    def origin(self) -> str:
        """No other process to tell apart from."""
        return ""

    async def start(
        self,
        wake: Callable[[StoredElsewhere | None], None],
        rows_written: Callable[[int], None] = lambda chat: None,
    ) -> bool:
        """Nobody else runs on this database: a cold start (its stores and commits wake it)."""
        return True

    async def joined(self) -> None:
        """Nobody waits for the resume."""

    async def try_topic(self, topic: tuple[int, int]) -> bool:
        """Claim a topic's line."""
        return _take(self._topics, (topic[0], topic[1]))

    async def release_topic(self, topic: tuple[int, int]) -> None:
        """Give a topic's line back."""
        self._topics.discard((topic[0], topic[1]))

    async def try_call(self, update_id: int) -> bool:
        """Claim one call."""
        return _take(self._calls, update_id)

    async def release_call(self, update_id: int) -> None:
        """Give a call back."""
        self._calls.discard(update_id)

    async def unprocessed(self, update_ids: Sequence[int]) -> set[int]:
        """All of them: in one process only the dispatcher that stored them takes them."""
        return set(update_ids)

    async def try_chat(self, chat_id: int) -> bool:
        """Lease a chat's sending."""
        return _take(self._chats, chat_id)

    async def release_chat(self, chat_id: int) -> None:
        """Give a chat's lease back."""
        self._chats.discard(chat_id)

    def holds_chat(self, chat_id: int) -> bool:
        """Whether the chat is leased."""
        return chat_id in self._chats

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of a press."""
        return _take(self._pledges, query_id)

    async def release_pledge(self, query_id: str) -> None:
        """Let a press go."""
        self._pledges.discard(query_id)

    async def load_pace(self, chat_id: int) -> dict[str, Any]:
        """Nothing is shared: the process keeps its windows itself."""
        return {}

    async def swap_pace(self, chat_id: int, seen: dict[str, Any], new: dict[str, Any]) -> bool:
        """Nobody else changes it."""
        return True

    def bot_share(self) -> float:
        """The whole bot-wide limit."""
        return 1.0

    async def ping(self) -> None:
        """Always there."""

    async def close(self) -> None:
        """Forget everything."""
        for held in (self._topics, self._calls, self._chats, self._pledges):
            held.clear()


def _take(held: set[Any], key: Any) -> bool:
    if key in held:
        return False
    held.add(key)
    return True
