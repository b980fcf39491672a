"""Messages as Telegram shows them: HTML formatting, replies, deletions, documents, alerts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import Page, expect

from telesnap.sandbox.app import Sandbox
from tests.sandbox.helpers import ANN, BOB, GROUP_ID

from .conftest import LOOP
from .page_helpers import message, pane, send

pytestmark = LOOP


async def bot_call(sandbox: Sandbox, method: str, **params: Any) -> Any:
    """A Bot API call made with the sandbox bot's token, as another client of it could."""
    url = f"{sandbox.url}bot{sandbox.emulator.config.token}/{method}"
    async with aiohttp.ClientSession() as session, session.post(url, json=params) as response:
        body = await response.json()
    assert body["ok"], body
    return body["result"]


async def test_formatting_replies_and_deletions_show_as_in_telegram(
    page: Page, sandbox: Sandbox
) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await send(ann, "hello there")
    await message(bob, "hello there").wait_for()
    said = sandbox.emulator.world.chat(GROUP_ID).last_message_id
    sent = await bot_call(
        sandbox,
        "sendMessage",
        chat_id=GROUP_ID,
        parse_mode="HTML",
        text='<b>bold</b> <s>gone</s> <a href="https://example.org/">a link</a> '
        '<a href="tg://user?id=1001">Ann</a> &lt;b&gt;',
        reply_parameters={"message_id": said},
    )
    shown = bob.locator(f'.message[data-message-id="{sent["message_id"]}"]')
    await expect(shown.locator(".body b")).to_have_text("bold")
    await expect(shown.locator(".body s")).to_have_text("gone")
    await expect(shown.locator('.body a[href="https://example.org/"]')).to_have_text("a link")
    await expect(shown.locator(".body .mention")).to_have_text("Ann")
    await expect(shown.locator(".body")).to_contain_text("<b>")
    await expect(shown.locator(".quote")).to_contain_text("hello there")
    await bot_call(sandbox, "deleteMessage", chat_id=GROUP_ID, message_id=sent["message_id"])
    await expect(shown).to_have_count(0)
    await expect(message(bob, "hello there")).to_have_count(1)


async def test_a_document_the_bot_sends_can_be_downloaded(
    page: Page, sandbox: Sandbox, tmp_path: Path
) -> None:
    content = b"# telesnap replay\nseq\tkind\tjson\n"
    url = f"{sandbox.url}bot{sandbox.emulator.config.token}/sendDocument"
    form = aiohttp.FormData()
    form.add_field("chat_id", str(GROUP_ID))
    form.add_field("caption", "the whole game")
    form.add_field("document", content, filename="replay-7.tsv", content_type="text/plain")
    async with aiohttp.ClientSession() as session, session.post(url, data=form) as response:
        assert response.status == 200
    link = pane(page, ANN).locator(".message a.document")
    await expect(link).to_contain_text("replay-7.tsv")
    async with page.expect_download() as download_info:
        await link.click()
    download = await download_info.value
    assert download.suggested_filename == "replay-7.tsv"
    saved = tmp_path / "download.tsv"
    await download.save_as(saved)
    assert saved.read_bytes() == content


async def test_an_alert_opens_a_dialog_on_the_pressing_persons_pane_only(
    page: Page, sandbox: Sandbox
) -> None:
    sandbox.emulator.updates.set_paused(True)  # the bot must not answer this press itself
    sent = await bot_call(
        sandbox,
        "sendMessage",
        chat_id=GROUP_ID,
        text="Press it",
        reply_markup={"inline_keyboard": [[{"text": "Press", "callback_data": "press"}]]},
    )
    bob = pane(page, BOB)
    await (
        bob.locator(f'.message[data-message-id="{sent["message_id"]}"]')
        .get_by_role("button", name="Press")
        .click()
    )
    queries = sandbox.emulator.callback_queries
    assert await sandbox.emulator.changes.wait_until(lambda: bool(queries), 10.0)
    (query_id,) = queries
    await bot_call(
        sandbox, "answerCallbackQuery", callback_query_id=query_id, text="Careful!", show_alert=True
    )
    await expect(bob.locator(".alert")).to_be_visible()
    await expect(bob.locator(".alert p")).to_have_text("Careful!")
    await expect(pane(page, ANN).locator(".alert")).to_be_hidden()
    await bob.locator(".alert").get_by_role("button", name="OK").click()
    await expect(bob.locator(".alert")).to_be_hidden()
