"""A batch that could not be stored is logged once, by telesnap, and fetched again.

python-telegram-bot's polling loop logs any error that is not Telegram's as CRITICAL, "Received
data was *not* processed!", although the same offset brings the batch back.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from telegram import Update, User
from telegram.ext import ExtBot, Updater

from telesnap.bot.ingress import application
from telesnap.bot.ingress.application import HandedToInbox, StampingBot

from .inbox_helpers import SAFETY_S, message_update

BATCH = (message_update(61, -5), message_update(62, -5))


class FailsFirst:
    """An intake whose first stores fail (a database gone for a moment)."""

    def __init__(self, failures: int = 1) -> None:
        self.failures = failures
        self.attempts = 0
        self.stored: list[int] = []
        self.done = asyncio.Event()

    async def receive(self, updates: list[Update], payloads: list[dict[str, Any]]) -> None:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise ConnectionResetError("the database closed the connection")
        self.stored.extend(update.update_id for update in updates)
        self.done.set()


@pytest.mark.parametrize("failures", [1, 3])
async def test_a_failed_store_is_one_error_and_the_batch_is_stored_on_the_next_try(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, failures: int
) -> None:
    """Each failure is a line naming its cause; only the first of a run has the traceback (a
    database away for a minute would log hundreds of lines of the same one)."""
    offsets: list[int | None] = []

    async def fetched(self: ExtBot[None], *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        offset = kwargs.get("offset")
        offsets.append(offset)
        return BATCH if not offset or offset <= BATCH[0].update_id else ()

    async def me(self: ExtBot[None], *args: Any, **kwargs: Any) -> User:
        return User(1, "Snap", is_bot=True, username="snapbot")

    async def no_webhook(self: ExtBot[None], *args: Any, **kwargs: Any) -> bool:
        return True

    monkeypatch.setattr(ExtBot, "get_updates", fetched)
    monkeypatch.setattr(ExtBot, "get_me", me)
    monkeypatch.setattr(ExtBot, "delete_webhook", no_webhook)
    monkeypatch.setattr(application, "FIRST_STORE_BACKOFF_S", 0.0)
    bot = StampingBot("123:secret", "http://127.0.0.1:1")
    intake = FailsFirst(failures)
    bot.store_into(intake)  # type: ignore[arg-type]
    updater = Updater(bot, HandedToInbox())
    caplog.set_level(logging.DEBUG)
    try:
        await updater.initialize()
        await updater.start_polling(poll_interval=0.01)
        async with asyncio.timeout(SAFETY_S):
            await intake.done.wait()
        await updater.stop()
    finally:
        await updater.shutdown()
        await bot.close_transports()

    assert intake.stored == [61, 62]
    assert set(offsets[: failures + 1]) == {offsets[0]}, "the batch is asked for again"
    assert BATCH[-1].update_id + 1 in offsets[failures + 1 :], "once stored, it is confirmed"
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.levelname, r.name, r.getMessage()) for r in loud] == [
        (
            "ERROR",
            "telesnap.bot.ingress.application",
            "could not store updates 61 to 62 (ConnectionResetError: the database closed the"
            " connection); asking for them again in 0.0 s",
        )
    ] * failures
    assert loud[0].exc_info is not None, "the first has the traceback"
    assert all(record.exc_info is None for record in loud[1:]), "one line each after it"
    assert f"storing updates works again, after {failures} failures" in caplog.messages
