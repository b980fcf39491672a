"""In a real browser: the page opens only with the run's key; other sites cannot call it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp import web
from playwright.async_api import Browser, Page

from telesnap.sandbox.app import Sandbox

from .conftest import LOOP

pytestmark = LOOP

EVIL_PAGE = """<!doctype html><title>a page on another port</title>
<script>
window.attempt = fetch("{target}_sandbox/clock/skip", {{
  method: "POST", mode: "no-cors", credentials: "include",
  headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{seconds: 600}}),
}}).then(() => "sent", () => "failed");
</script>"""


@pytest_asyncio.fixture(loop_scope="session")
async def other_site(sandbox: Sandbox) -> AsyncIterator[str]:
    """A page on another port of this machine (same site, another origin) that calls the sandbox."""

    async def handle(request: web.Request) -> web.Response:
        return web.Response(text=EVIL_PAGE.format(target=sandbox.url), content_type="text/html")

    app = web.Application()
    app.router.add_get("/", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/"
    await runner.cleanup()


async def test_the_address_without_the_key_shows_why_it_is_refused(
    browser: Browser, sandbox: Sandbox
) -> None:
    page = await browser.new_page()
    try:
        response = await page.goto(sandbox.url)
        assert response is not None
        assert response.status == 403
        assert "key of this run" in await page.locator("body").inner_text()
    finally:
        await page.close()


async def test_a_reload_without_the_key_keeps_working(page: Page, sandbox: Sandbox) -> None:
    response = await page.goto(sandbox.url)
    assert response is not None
    assert response.status == 200
    await page.locator("#status", has_text="live").wait_for()


async def test_the_address_bar_drops_the_key_and_a_reload_keeps_working(
    page: Page, sandbox: Sandbox
) -> None:
    # The page fixture opened the printed address, key included.
    await page.locator("#status", has_text="live").wait_for()
    assert "k=" not in page.url
    assert page.url.rstrip("/") == sandbox.url.rstrip("/")
    response = await page.reload()
    assert response is not None
    assert response.status == 200
    await page.locator("#status", has_text="live").wait_for()


async def test_another_sites_page_cannot_move_the_clock(
    page: Page, sandbox: Sandbox, other_site: str
) -> None:
    # The browser holds the sandbox's cookie (the page fixture opened it), as an operator's would;
    # the other site is open in another tab (its refused call logs a 403 there, not on the page).
    other_tab = await page.context.new_page()
    try:
        await other_tab.goto(other_site)
        assert await other_tab.evaluate("window.attempt") == "sent"
    finally:
        await other_tab.close()
    overview = await page.evaluate("() => fetch('/_sandbox/').then(r => r.json())")
    assert overview["clock"]["skipped_seconds"] == 0
    assert sandbox.clock.skipped_seconds == 0
