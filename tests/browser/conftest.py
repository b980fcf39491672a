"""Browser tests: the sandbox page in Debian's Chromium, driven by Playwright.

Playwright never downloads a browser here: it launches the system Chromium
(``/usr/bin/chromium``, or ``TELESNAP_CHROMIUM``). Without it, or without
Playwright, every test here is skipped with that reason. Each test saves a
screenshot to ``tests/browser/artifacts/`` (git-ignored).

One Chromium serves the whole test session (a launch costs about a second); each
test gets a sandbox of its own and a page in a new browser context, so no cookie
or storage passes from one test to the next. The tests and their fixtures run on
the session's event loop, the one the browser lives on: every test module here
sets ``pytestmark = LOOP``, and its async fixtures take ``loop_scope="session"``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
import pytest_asyncio

from telesnap.sandbox.app import Sandbox
from tests.sandbox.helpers import running_sandbox

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("TELESNAP_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

try:
    from playwright.async_api import Browser, ConsoleMessage, Page, async_playwright
except ImportError:  # pragma: no cover - the dev extra installs it
    async_playwright = None

if async_playwright is None:
    SKIP_REASON = "Playwright is not installed (pip install -e '.[dev]')"
elif not Path(CHROMIUM).exists():
    SKIP_REASON = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
else:
    SKIP_REASON = ""

LOOP = pytest.mark.asyncio(loop_scope="session")
"""The browser tests run on the session's loop, where the shared browser lives."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not SKIP_REASON:
        return
    if os.environ.get("TELESNAP_BROWSER_TESTS") == "required":  # CI must run them
        raise pytest.UsageError(f"the browser tests cannot run: {SKIP_REASON}")
    here = Path(__file__).resolve().parent
    for item in items:
        if Path(str(item.fspath)).resolve().parent == here:
            item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest_asyncio.fixture(loop_scope="session")
async def sandbox(tmp_path: Path) -> AsyncIterator[Sandbox]:
    async with running_sandbox(tmp_path) as running:
        yield running


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    assert async_playwright is not None
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(
    browser: Browser, sandbox: Sandbox, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", partial(_collect_error, errors))
    await opened.goto(sandbox.page_url)
    await opened.locator("#status", has_text="live").wait_for()
    try:
        yield opened
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        await opened.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"))
        await context.close()
    assert errors == [], f"the page raised or logged errors: {errors}"


def _collect_error(errors: list[str], message: ConsoleMessage) -> None:
    if message.type == "error":
        errors.append(f"console: {message.text} ({message.location.get('url')})")
