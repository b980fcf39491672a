"""A board Telegram refuses for good is set aside, logged with its chat and its game."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from telegram.error import BadRequest

from ..services.test_play_flow import PLACE
from .sending import FakeBotApi, Sessions, Wired


@pytest.fixture
async def wired(session_factory: Sessions) -> AsyncIterator[Wired]:
    wired = Wired(session_factory, FakeBotApi())
    yield wired
    await wired.close()


async def test_a_board_refused_with_a_400_is_logged_with_its_chat_and_game(
    wired: Wired, caplog: pytest.LogCaptureFixture
) -> None:
    await wired.opened()
    await wired.settle()  # the lobby message is out: the next message sent is the board
    wired.bot.errors.append(("send_message", BadRequest("Bad Request: can't parse entities")))
    with caplog.at_level(logging.WARNING):
        await wired.started(opened=True)
        await wired.settle()
    (board,) = await wired.rows("board")
    assert board.state == "failed"
    set_aside = [r for r in caplog.records if "set aside" in r.getMessage()]
    assert set_aside, "the refusal is logged"
    errors = [r.getMessage() for r in set_aside if r.levelno == logging.ERROR]
    assert errors, "at ERROR"
    for line in (r.getMessage() for r in set_aside):
        assert f"chat {PLACE.chat_id}" in line
        assert f"game {board.game_id}" in line
