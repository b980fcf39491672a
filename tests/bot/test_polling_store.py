"""Long polling: a batch goes back to python-telegram-bot (whose next getUpdates
confirms it) only once it is stored in the inbox."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from telegram import Update
from telegram.error import Conflict, InvalidToken, RetryAfter, TimedOut
from telegram.ext import ExtBot

from telesnap.bot.ingress.api_errors import log_polling_error
from telesnap.bot.ingress.application import POLL_GIVEN_UP_S, StampingBot
from telesnap.emulator.testing import running_emulator

from .inbox_helpers import SAFETY_S, message_update


class HeldIntake:
    """An intake whose store is held open until the test lets it commit."""

    def __init__(self) -> None:
        self.storing = asyncio.Event()
        self.commit = asyncio.Event()
        self.payloads: list[dict[str, Any]] = []

    async def receive(self, updates: Any, payloads: list[dict[str, Any]]) -> None:
        self.storing.set()
        await self.commit.wait()
        self.payloads.extend(payloads)


async def test_a_batch_is_handed_back_only_after_it_is_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def fetched(self: ExtBot[None], *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        return (message_update(41, -5), message_update(42, -5))

    monkeypatch.setattr(ExtBot, "get_updates", fetched)
    bot = StampingBot("123:secret", "http://127.0.0.1:1")
    intake = HeldIntake()
    bot.store_into(intake)  # type: ignore[arg-type]
    try:
        polling = asyncio.create_task(bot.get_updates(offset=41))
        async with asyncio.timeout(SAFETY_S):
            await intake.storing.wait()
        for _ in range(20):
            await asyncio.sleep(0)  # every chance to return early
        assert not polling.done(), "not handed back (so not confirmed) while being stored"
        intake.commit.set()
        async with asyncio.timeout(SAFETY_S):
            updates = await polling
        assert [update.update_id for update in updates] == [41, 42]
        assert [payload["update_id"] for payload in intake.payloads] == [41, 42]
    finally:
        await bot.close_transports()


async def test_the_stored_payload_is_the_json_the_bot_api_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batch's JSON goes to the inbox as fetched, not rebuilt from the parsed updates.

    This leans on python-telegram-bot's ``Bot._post``, through which ``get_updates``
    fetches its batch: if that changed, the payload would be rebuilt (an equal dict).
    """
    sent = [message_update(51, -5).to_dict(), message_update(52, -6).to_dict()]
    sent[1]["message"]["text"] = "/flip"
    as_sent = copy.deepcopy(sent)

    async def post(self: ExtBot[None], endpoint: str, *args: Any, **kwargs: Any) -> Any:
        assert endpoint == "getUpdates"
        return sent

    monkeypatch.setattr(ExtBot, "_post", post)
    bot = StampingBot("123:secret", "http://127.0.0.1:1")
    intake = HeldIntake()
    intake.commit.set()
    bot.store_into(intake)  # type: ignore[arg-type]
    try:
        updates = await bot.get_updates(offset=51)
    finally:
        await bot.close_transports()
    assert [update.update_id for update in updates] == [51, 52]
    assert all(stored is fetched for stored, fetched in zip(intake.payloads, sent, strict=True))
    assert intake.payloads == as_sent, "parsing the updates left their JSON as it came"


@asynccontextmanager
async def connected(token: str, api_url: str) -> AsyncIterator[StampingBot]:
    """A bot whose transports are open, for a call or two to the emulator."""
    bot = StampingBot(token, api_url)
    for transport in bot.transports:
        await transport.initialize()
    try:
        yield bot
    finally:
        await bot.close_transports()


async def test_a_poll_left_unanswered_is_given_up_soon_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A connection that went dead mid-poll (no reset, no answer) is dropped a few seconds past
    the poll's own timeout, and said once, as any polling outage is: not waited on for a minute
    in silence while every press expires."""
    async with running_emulator() as running:
        await running.client.inject_fault("getUpdates", "timeout", hold=POLL_GIVEN_UP_S * 3)
        caplog.set_level(logging.WARNING)
        async with connected(running.token, running.url) as bot:
            with pytest.raises(TimedOut):
                await bot.get_updates(timeout=0)  # the transport's own read timeout alone
    assert [record.getMessage() for record in caplog.records] == [
        "long polling: the Bot API is unreachable (Timed out); retrying"
    ]


def test_a_second_process_polling_with_the_token_is_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What the operator can act on is said in a line; a traceback is for what nobody expects."""
    caplog.set_level(logging.WARNING)
    log_polling_error(Conflict("Conflict: terminated by other getUpdates request"))
    assert [(record.getMessage(), record.exc_info) for record in caplog.records] == [
        (
            "long polling: another process polls with this token (Conflict: terminated by other"
            " getUpdates request); retrying",
            None,
        )
    ]


async def test_a_poll_met_by_flood_control_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """python-telegram-bot waits a 429 out without a word (no error callback): the bot says it."""
    async with running_emulator() as running:
        await running.client.inject_fault("getUpdates", "retry_after", retry_after=3)
        caplog.set_level(logging.WARNING)
        async with connected(running.token, running.url) as bot:
            with pytest.raises(RetryAfter):
                await bot.get_updates(timeout=0)
    assert [(record.getMessage(), record.exc_info) for record in caplog.records] == [
        ("long polling: the Bot API asks to wait (flood control); retrying", None)
    ]


async def test_only_a_401_is_a_revoked_token_not_a_method_the_server_lacks() -> None:
    """python-telegram-bot raises InvalidToken for a 404 too: a Bot API server without one
    method must not stop the bot as if its token were revoked."""
    async with running_emulator() as running:
        async with connected(running.token, running.url) as bot:
            with pytest.raises(InvalidToken):
                await bot._post("noSuchMethod")
            assert not bot.token_revoked.is_set()
        async with connected("42:revoked", running.url) as revoked:
            with pytest.raises(InvalidToken):
                await revoked.get_me()
            assert revoked.token_revoked.is_set()
