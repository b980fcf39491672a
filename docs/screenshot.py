"""Take docs/sandbox.png: a game in progress in the sandbox, as the README shows it.

Run from the repository root: ``.venv/bin/python docs/screenshot.py`` (needs
Playwright and Debian's Chromium, as the browser tests do).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from telesnap.sandbox.robots import RobotStyle, read_board  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.sandbox.helpers import Players, running_sandbox  # noqa: E402


async def main() -> None:
    """Play until a race has been decided, then take the picture."""
    with tempfile.TemporaryDirectory() as folder:
        async with running_sandbox(Path(folder)) as sandbox:
            robot = sandbox.add_person("Robo", "en")
            sandbox.robots.add(robot.id, RobotStyle(250, 60, 0.0))
            sandbox.add_person("Chen", "en")
            players = Players(sandbox)
            try:
                sent = await players.command("Ann", "/newgame")
                lobby = await players.wait_for("A game of Snap is starting", after=sent)
                for name in ("Bob", "Chen"):
                    await players.press(name, lobby, "Join")
                await players.client.wait_for_message(
                    players.chat_id, lambda m: m.message_id == lobby.message_id and "Robo" in m.text
                )
                await players.press("Ann", lobby, "Start")
                board = await players.latest_board(after=lobby.message_id)
                for _ in range(60):
                    races = await sandbox.races(players.chat_id, None)
                    if races and races[-1].outcome != "open":
                        break
                    reading = read_board(board.text)
                    if reading.turn in players.names and reading.turn != "Robo":
                        await players.press(reading.turn, board, "Flip")
                    board = await players.latest_board(after=board.message_id)
                await players.client.wait_until_idle()
            finally:
                await players.close()
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS
                )
                page = await browser.new_page(viewport={"width": 1600, "height": 900})
                await page.goto(sandbox.url)
                await page.locator("#status", has_text="live").wait_for()
                await page.locator(".message").last.wait_for()
                await page.locator("#races .race").first.wait_for()
                await page.screenshot(path=str(ROOT / "docs" / "sandbox.png"))
                await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
