"""Asking Telegram whether a user is a chat admin, for a manager's action."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from telegram.error import NetworkError

from telesnap.bot.handlers.context import admin_check
from telesnap.services.types import Actor, Place


class UnreachableBot:
    """A bot whose getChatMember fails the way a network outage does."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    async def get_chat_member(self, chat_id: int, user_id: int) -> Any:
        self.asked.append((chat_id, user_id))
        raise NetworkError("connection reset")


async def test_when_telegram_cannot_say_the_user_is_no_admin_and_the_failure_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = UnreachableBot()
    check = admin_check(bot, Place(chat_id=-5), Actor(7, "Zed"))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="telesnap.bot.handlers.context"):
        assert await check() is False
    assert bot.asked == [(-5, 7)]
    assert "chat -5" in caplog.text
    assert "user 7" in caplog.text
    assert "connection reset" in caplog.text
