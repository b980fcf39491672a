"""Reading and driving the sandbox page as a person does."""

from __future__ import annotations

import re

from playwright.async_api import Locator, Page, expect

from telesnap.sandbox.robots import BoardReading, read_board

BOARD = re.compile(r"face-down| wins|Nobody wins")
LATEST_BOARD_CHANGED = """([userId, key, text]) => {
  const boards = [...document.querySelectorAll(`.pane[data-user-id="${userId}"] .message`)]
    .filter((m) => /face-down| wins|Nobody wins/.test(m.innerText));
  const last = boards[boards.length - 1];
  if (!last) return false;
  return last.dataset.key !== key || last.querySelector(".body").innerText !== text;
}"""


def pane(page: Page, user_id: int) -> Locator:
    return page.locator(f'.pane[data-user-id="{user_id}"]')


async def send(person: Locator, text: str) -> None:
    await person.locator(".text").fill(text)
    await person.locator(".composer button[type=submit]").click()


def message(person: Locator, text: str | re.Pattern[str]) -> Locator:
    return person.locator(".message", has_text=text)


async def latest_board(person: Locator) -> tuple[str, str, BoardReading]:
    """The newest board in the pane: its key, its text and what it says."""
    board = message(person, BOARD).last
    await board.wait_for()
    key = await board.get_attribute("data-key")
    text = await board.locator(".body").inner_text()
    assert key is not None
    return key, text, read_board(text)


async def wait_for_next_board(page: Page, watcher: int, key: str, text: str) -> None:
    await page.wait_for_function(LATEST_BOARD_CHANGED, arg=[watcher, key, text])


async def open_game(page: Page, creator: int, joiners: list[int]) -> None:
    """The creator sends /newgame, the others press Join, the creator presses Start."""
    await send(pane(page, creator), "/newgame")
    lobby = message(pane(page, creator), "A game of Snap is starting")
    await lobby.wait_for()
    key = await lobby.get_attribute("data-key")
    for joiner in joiners:
        await (
            pane(page, joiner)
            .locator(f'.message[data-key="{key}"]')
            .get_by_role("button", name="Join")
            .click()
        )
        await expect(pane(page, joiner).locator(".toast")).to_have_count(1)
    await lobby.get_by_role("button", name="Start").click()
    await message(pane(page, creator), BOARD).first.wait_for()
