"""A start that fails posts nothing, and long polling logs an outage in one line a retry.

A start that fails (its webhook refused, its port in use) ends before the cold start's resume,
so the running games see one "I am back", from the start that works.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from telesnap.app import BotRunner, Webhook
from telesnap.config import ConfigError, Settings
from telesnap.emulator.testing import RunningEmulator, running_emulator
from tests.e2e.harness import NO_FLOOD, Table, database_file, table_with
from tests.test_cli_errors import closed_port

BACK = "I am back: the game goes on."
SECRET = "s" * 40


@pytest.fixture
async def emulator() -> AsyncIterator[RunningEmulator]:
    """The e2e emulator, whose rules the bot keeps but for the webhook URLs it refuses here."""
    async with running_emulator(flood_limits=False) as running:
        yield running
        violations = await running.client.violations()
        assert [v.method for v in violations if v.method != "setWebhook"] == [], violations


def refused_webhook(port: int) -> Webhook:
    """A webhook whose URL the emulator refuses: it delivers only to this machine."""
    return Webhook("https://example.org/hook", "127.0.0.1", port, SECRET)


def webhook_on(port: int) -> Webhook:
    return Webhook(f"http://127.0.0.1:{port}/telegram", "127.0.0.1", port, SECRET)


async def backs(table: Table) -> int:
    await table.client.wait_until_idle()
    return sum(BACK in message.text for message in await table.messages())


async def start_that_fails(table: Table, webhook: Webhook, error: type[Exception]) -> None:
    settings = Settings(
        token=table.running.token, api_url=table.running.url, database_url=table.database_url
    )
    runner = BotRunner(settings, limits=NO_FLOOD, webhook=webhook)
    try:
        with pytest.raises(error):
            await runner.start()
    finally:
        await runner.stop()


@pytest.mark.parametrize(
    ("webhook", "error"),
    [
        (lambda busy: refused_webhook(closed_port()), ConfigError),
        (lambda busy: webhook_on(busy), OSError),
    ],
    ids=["webhook-url-refused", "port-in-use"],
)
async def test_a_start_that_fails_posts_no_i_am_back(
    emulator: RunningEmulator,
    tmp_path: Path,
    webhook: Callable[[int], Webhook],
    error: type[Exception],
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await table.open_and_start(["Ann", "Bob"])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        for _ in range(2):
            await start_that_fails(table, webhook(busy.getsockname()[1]), error)
    assert await backs(table) == 0
    await table.start_bot()
    try:
        await table.wait_for_text(BACK)
        assert await backs(table) == 1
    finally:
        await table.stop_bot()


async def test_an_outage_while_polling_is_one_warning_a_retry(
    emulator: RunningEmulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await emulator.client.inject_fault("getUpdates", "bad_gateway", count=2)
        caplog.set_level(logging.WARNING)
        caplog.clear()
        await table.command("Ann", "newgame")  # the poll in flight returns; the next ones fail
        await table.wait_for_text("A game of Snap is starting")  # polling went on after them
    polling = [
        record
        for record in caplog.records
        if "polling" in record.getMessage() and record.name.startswith(("telegram", "telesnap"))
    ]
    assert [(record.levelname, record.getMessage()) for record in polling] == [
        ("WARNING", "long polling: the Bot API is unreachable (Bad Gateway); retrying")
    ] * 2
    assert all(record.exc_info is None for record in polling)


async def test_a_token_revoked_while_running_stops_the_bot_with_one_line(
    emulator: RunningEmulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot whose token was revoked (BotFather's /revoke) can ask nothing more: it stops and
    says why, so a supervisor sees it, rather than stay up, deaf."""
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await table.stop_bot()  # this one runs as `telesnap run` does
        settings = Settings(
            token=table.running.token, api_url=table.running.url, database_url=table.database_url
        )
        running = asyncio.create_task(BotRunner(settings, limits=NO_FLOOD).run_until_stopped())
        await table.command("Ann", "newgame")
        await table.wait_for_text("A game of Snap is starting")
        caplog.set_level(logging.ERROR)
        core = emulator.emulator
        core.config = dataclasses.replace(core.config, token="42:revoked")
        refused = r"refused by the Bot API server .* while the bot ran"
        with pytest.raises(ConfigError, match=refused):
            async with asyncio.timeout(30):
                await running
    assert "the Bot API refused the token (Unauthorized): stopping" in caplog.messages
    assert [r.getMessage() for r in caplog.records if r.exc_info] == [], "one line, no traceback"
