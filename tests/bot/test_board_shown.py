"""A board whose showing cannot be stored: the failure is logged with its game and chat."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from telesnap.services.types import Place, Receipt

from .runtimes import wired_runtime


class _UnreachableDatabase:
    """A play service whose database is gone."""

    def __init__(self) -> None:
        self.attempts: list[tuple[int, int, int]] = []

    async def record_board_shown(
        self, game_id: int, version: int, message_id: int, shown: Receipt
    ) -> None:
        self.attempts.append((game_id, version, message_id))
        raise ConnectionError("database unreachable")


async def test_a_board_whose_showing_cannot_be_stored_is_logged_and_not_sent_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    play = _UnreachableDatabase()
    runtime = wired_runtime(play=play)
    shown = runtime.presenter.board_shown(Place(chat_id=-55))
    with caplog.at_level(logging.ERROR, logger="telesnap.bot.presenter"):
        await shown(SimpleNamespace(game_id=7, board_version=3, is_over=False), 42)
        await runtime.courier.settle()
    assert play.attempts == [(7, 3, 42)]
    assert "could not store that message 42 shows board 3 of game 7 in chat -55" in caplog.text
    assert "database unreachable" in caplog.text
