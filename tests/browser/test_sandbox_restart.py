"""The page across a restart of the sandbox: what an open tab says, and the hint of a new page."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect
from yarl import URL

from telesnap.emulator.client import EmulatorClient
from telesnap.sandbox.app import Sandbox
from tests.sandbox.helpers import ANN, running_sandbox

from .conftest import LOOP, open_page
from .page_helpers import pane

pytestmark = LOOP

RESTARTED = "the sandbox restarted: open the address it printed"


def table_1(sandbox: Sandbox) -> tuple[int, int]:
    """The forum's id and its topic "Table 1"."""
    for chat in sandbox.emulator.world.chats.values():
        for thread, name in chat.topics.items():
            if name == "Table 1":
                return chat.id, thread
    raise AssertionError("no topic Table 1")


async def test_a_tab_left_open_across_a_restart_says_to_open_the_printed_address(
    browser: Browser, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="telesnap.emulator.guard")
    async with AsyncExitStack() as first_run:
        first = await first_run.enter_async_context(running_sandbox(tmp_path, roster=True))
        port = URL(first.url).port
        assert port is not None
        # The page's clock stands still: it tries to reconnect only when the new run is up.
        # A call it makes while the sandbox is down cannot reach it (the page says so).
        async with open_page(
            browser, first.page_url, "restart", fake_clock=True, refused_calls=True
        ) as page:
            await page.clock.pause_at(await page.evaluate("Date.now() + 1000"))
            status = page.locator("#status")
            await first_run.aclose()
            await expect(status).to_have_text("disconnected: reconnecting…")
            async with running_sandbox(tmp_path, roster=True, port=port):
                await page.clock.run_for(1000)
                await expect(status).to_have_text(RESTARTED)
                await page.clock.run_for(600_000)
                await expect(status).to_have_text(RESTARTED)
    refused = [r for r in caplog.records if "refused GET /_emulator/live" in r.getMessage()]
    assert len(refused) == 1, [r.getMessage() for r in refused]


async def test_after_a_restart_a_topic_whose_lobby_was_open_says_how_to_bring_it_back(
    browser: Browser, tmp_path: Path
) -> None:
    async with running_sandbox(tmp_path, roster=True) as first:
        forum, thread = table_1(first)
        client = EmulatorClient(first.url, key=first.key)
        try:
            sent = await client.send_text(forum, ANN, "/newgame", message_thread_id=thread)
            await client.wait_for_message(
                forum, lambda m: "A game of Snap is starting" in m.text and m.message_id > sent
            )
        finally:
            await client.close()
    async with (
        running_sandbox(tmp_path, roster=True) as second,
        open_page(browser, second.page_url, "restart-hint") as page,
    ):
        ann = pane(page, ANN)
        await ann.get_by_role("tab", name="Snap forum › Table 1").click()
        await expect(ann.locator(".service")).to_have_count(1)
        await expect(ann.locator(".hint")).to_contain_text(
            "A game was open in Snap forum › Table 1 when the sandbox stopped: "
            "send /extend in Ann's pane there to bring it back"
        )
