"""A board whose showing cannot be stored: the failure is logged with its game and chat."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from telesnap.services.types import Place

from .runtimes import wired_runtime


class _UnreachableDatabase:
    """An outbox whose database is gone."""

    def __init__(self) -> None:
        self.attempts: list[tuple[list[int], int, int, int]] = []

    async def boards_sent(
        self, chat_id: int, entry_ids: Sequence[int], game_id: int, version: int, message_id: int
    ) -> bool:
        self.attempts.append((list(entry_ids), game_id, version, message_id))
        raise ConnectionError("database unreachable")


class _Tidier:
    def board_shown(self, *args: Any, **kwargs: Any) -> None:
        pass


async def test_a_board_whose_showing_cannot_be_stored_is_logged_and_not_sent_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    boards = _UnreachableDatabase()
    runtime = wired_runtime(boards=boards)
    runtime.presenter.tidier = _Tidier()  # type: ignore[assignment]
    shown = runtime.presenter.board_shown(Place(chat_id=-55))
    table = SimpleNamespace(game_id=7, board_version=3, is_over=False)
    post = SimpleNamespace(
        table=table, entry_ids=[11, 12], more=False, previous_message=None, previous_version=None
    )
    with caplog.at_level(logging.ERROR, logger="telesnap.bot.delivery.presenter"):
        await shown(post, 42)
    assert boards.attempts == [([11, 12], 7, 3, 42)]
    assert "could not store that message 42 shows board 3 of game 7 in chat -55" in caplog.text
    assert "database unreachable" in caplog.text
    entries = [SimpleNamespace(id=11, thread_id=0), SimpleNamespace(id=13, thread_id=0)]

    async def pending(chat_id: int, after_id: int) -> list[Any]:
        return entries

    runtime.presenter.outbox = SimpleNamespace(pending=pending)  # type: ignore[assignment]
    unsent = await runtime.presenter._read_topic_line(0, -55)
    assert [entry.id for entry in unsent] == [13], "a board shown once is not shown again"
