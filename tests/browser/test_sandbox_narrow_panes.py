"""Many people on a laptop screen: narrow panes still show every tab and every button whole."""

from __future__ import annotations

from playwright.async_api import Page, expect

from telesnap.sandbox.app import Sandbox
from tests.sandbox.helpers import ANN

from .conftest import ARTIFACTS, LOOP
from .page_helpers import message, pane, send

pytestmark = LOOP

LAPTOP = {"width": 1280, "height": 800}
TABS_OUT_OF_SIGHT = """(pane) => {
  const strip = pane.querySelector(".tabs").getBoundingClientRect();
  return [...pane.querySelectorAll(".tabs [role=tab]")]
    .filter((tab) => {
      const box = tab.getBoundingClientRect();
      return box.left < strip.left - 0.5 || box.right > strip.right + 0.5
        || box.bottom > strip.bottom + 0.5;
    })
    .map((tab) => tab.textContent);
}"""
BUTTONS_NOT_WHOLE = """(pane) => [...pane.querySelectorAll(".keyboard button")].filter((button) => {
  const bubble = button.closest(".message").getBoundingClientRect();
  const box = button.getBoundingClientRect();
  return button.scrollWidth > button.clientWidth + 1
    || box.left < bubble.left - 0.5 || box.right > bubble.right + 0.5;
}).map((button) => button.textContent)"""


async def add_people(page: Page, sandbox: Sandbox, *names: str) -> None:
    for name in names:
        sandbox.add_person(name, "en")
    await expect(page.locator(".pane")).to_have_count(2 + len(names))


async def test_with_four_panes_every_tab_and_the_private_chat_can_be_seen(
    page: Page, sandbox: Sandbox
) -> None:
    await page.set_viewport_size(LAPTOP)
    await add_people(page, sandbox, "Cid", "Dee")
    for index in range(4):
        person = page.locator(".pane").nth(index)
        await expect(person.get_by_role("tab", name="Telesnap Test")).to_be_visible()
        assert await person.evaluate(TABS_OUT_OF_SIGHT) == []


async def test_long_button_labels_wrap_inside_a_narrow_pane(page: Page, sandbox: Sandbox) -> None:
    await page.set_viewport_size(LAPTOP)
    await add_people(page, sandbox, "Cid", "Dee", "Eve")
    ann = pane(page, ANN)
    await send(ann, "/settings language mk")
    await message(ann, "Македонски").first.wait_for()
    await send(ann, "/settings")
    menu = ann.locator(".message", has=page.locator(".keyboard")).last
    await expect(menu.locator(".keyboard button").first).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "narrow-pane-buttons.png"))
    assert await ann.evaluate(BUTTONS_NOT_WHOLE) == []
