"""Asking Telegram whether a user is a chat admin, for a manager's action."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from telegram.error import NetworkError

from telesnap.bot.handlers.context import admin_check
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.texts import refusal_text
from telesnap.services.types import Actor, Place, Refused


class UnreachableBot:
    """A bot whose getChatMember fails the way a network outage does."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    async def get_chat_member(self, chat_id: int, user_id: int) -> Any:
        self.asked.append((chat_id, user_id))
        raise NetworkError("connection reset")


async def test_when_telegram_cannot_say_the_action_is_refused_with_a_retry_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = UnreachableBot()
    check = admin_check(bot, Place(chat_id=-5), Actor(7, "Zed"))  # type: ignore[arg-type]
    with (
        caplog.at_level(logging.WARNING, logger="telesnap.bot.handlers.context"),
        pytest.raises(Refused) as refused,
    ):
        await check()
    assert refusal_text(refused.value, translator("en")) == (
        "I could not ask Telegram whether you are an admin; try again in a moment."
    )
    assert bot.asked == [(-5, 7)]
    assert "chat -5" in caplog.text
    assert "user 7" in caplog.text
    assert "connection reset" in caplog.text
