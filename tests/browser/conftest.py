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
from contextlib import asynccontextmanager
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

REFUSED_CALL = "the server responded with a status of 400 (Bad Request)"
"""How Chromium logs a call the server refused (the page shows why in its error line)."""
UNREACHABLE_CALLS = (
    "Failed to load resource: net::ERR_FAILED",
    "Failed to load resource: net::ERR_CONNECTION_REFUSED",
)
"""How Chromium logs a call that never reached the server (the page says so in its error line):
cut off, or to a server that is down."""

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
    async with open_page(browser, sandbox.page_url, request.node.name) as opened:
        yield opened


@asynccontextmanager
async def open_page(
    browser: Browser,
    url: str,
    name: str,
    *,
    fake_clock: bool = False,
    refused_calls: bool = False,
) -> AsyncIterator[Page]:
    """``url`` open and live in a new browser context; at the end, no error raised or logged.

    ``fake_clock``: the page keeps Playwright's time (``page.clock``), which the test moves.
    ``refused_calls``: the browser's line for each call answered 400, or that never reached the
    server, is no error (the test makes the page ask for what the server refuses or cannot get).
    """
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", partial(_collect_error, errors, refused_calls=refused_calls))
    if fake_clock:
        await opened.clock.install()
    await opened.goto(url)
    await opened.locator("#status", has_text="live").wait_for()
    try:
        yield opened
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        await opened.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        await context.close()
    assert errors == [], f"the page raised or logged errors: {errors}"


def _collect_error(errors: list[str], message: ConsoleMessage, *, refused_calls: bool) -> None:
    if refused_calls and message.text.endswith((REFUSED_CALL, *UNREACHABLE_CALLS)):
        return
    if message.type == "error":
        errors.append(f"console: {message.text} ({message.location.get('url')})")
