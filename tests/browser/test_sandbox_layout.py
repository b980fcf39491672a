"""The sandbox page as a newcomer meets it: a hint, panes that follow, labels and text that fit."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from playwright.async_api import Page, expect

from telesnap.sandbox.app import Sandbox
from telesnap.sandbox.robots import read_board
from tests.sandbox.helpers import ANN, BOB, Players

from .conftest import ARTIFACTS, LOOP
from .page_helpers import message, open_game, pane, send

pytestmark = LOOP

AT_THE_BOTTOM = """(userId) => {
  const box = document.querySelector(`.pane[data-user-id="${userId}"] .messages`);
  return box.scrollHeight > box.clientHeight
    && box.scrollHeight - box.scrollTop - box.clientHeight < 2;
}"""
OVERFLOWING_LABELS = """() => [...document.querySelectorAll("#races .race")].flatMap((race) => {
  const lane = race.querySelector(".lane").getBoundingClientRect();
  return [...race.querySelectorAll(".call .label")]
    .filter((label) => {
      const box = label.getBoundingClientRect();
      return box.left < lane.left - 0.5 || box.right > lane.right + 0.5;
    })
    .map((label) => label.textContent);
})"""
FITS_THE_WIDTH = """() => ({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  outside: [...document.querySelectorAll("header.bar > *:not([hidden]), header.bar button")]
    .filter((node) => node.offsetParent !== null)
    .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 0.5)
    .map((node) => node.id || node.textContent.trim()),
})"""


async def test_a_pane_follows_new_messages_after_a_picture_loads(
    page: Page, sandbox: Sandbox
) -> None:
    players = Players(sandbox)
    try:
        sent = await players.command("Ann", "/settings flip_limit 10")
        await players.wait_for("Flip limit: 10", after=sent)
        for _ in range(2):
            await players.play_to_the_end(["Ann", "Bob"], snapper="Ann")
    finally:
        await players.close()
    ann = pane(page, ANN)
    await send(ann, "/stats")
    picture = ann.locator(".message img").last
    await expect(picture).to_be_visible()
    await page.wait_for_function(
        "(img) => img.complete && img.naturalHeight > 0", arg=await picture.element_handle()
    )
    await send(ann, "still watching")
    await expect(message(ann, "still watching")).to_be_visible()
    await page.wait_for_function(AT_THE_BOTTOM, arg=ANN)
    await expect(message(ann, "still watching")).to_be_in_viewport()


async def test_race_labels_fit_inside_the_timeline(page: Page, sandbox: Sandbox) -> None:
    players = Players(sandbox)
    try:
        board = await players.start_game(["Ann", "Bob"])
        for _ in range(200):
            reading = read_board(board.text)
            assert reading.turn is not None, "the game ended without a match"
            if reading.has_match:
                break
            await players.press(reading.turn, board, "Flip")
            board = await players.latest_board(after=board.message_id)
        # Bob's network is slow, so his call lands at the far (right) end of the timeline.
        response = await page.request.put(
            f"{sandbox.url}_emulator/users/{BOB}/network", data={"delay_ms": 400, "jitter_ms": 0}
        )
        assert response.ok
        await players.press("Ann", board, "Snap!")
        await players.press("Bob", board, "Snap!")
    finally:
        await players.close()
    race = page.locator("#races .race").last
    await expect(race.locator(".call")).to_have_count(2)
    await expect(race).to_contain_text("Bob +")
    ARTIFACTS.mkdir(exist_ok=True)
    await page.locator("#races-box").screenshot(path=str(ARTIFACTS / "race-labels.png"))
    assert await page.evaluate(OVERFLOWING_LABELS) == []


async def test_an_empty_group_says_what_to_do_first(page: Page, sandbox: Sandbox) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    for person in (ann, bob):
        await expect(person.locator(".hint")).to_have_text(
            "Send /newgame in Ann's pane to open a game of Snap, "
            "press Join in Bob's pane, then Start in Ann's."
        )
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "first-hint.png"))
    await send(ann, "/newgame")
    await message(bob, "A game of Snap is starting").wait_for()
    for person in (ann, bob):
        await expect(person.locator(".hint")).to_have_count(0)


async def test_a_new_forum_topic_says_what_to_do_first_under_its_service_line(
    page: Page, sandbox: Sandbox
) -> None:
    ann = pane(page, ANN)
    await ann.get_by_role("tab", name="Snap forum › Table 1").click()
    await expect(ann.locator(".service")).to_have_text("Topic “Table 1” created")
    await expect(ann.locator(".hint")).to_have_text(
        "Send /newgame in Ann's pane to open a game of Snap, "
        "press Join in Bob's pane, then Start in Ann's."
    )


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1400, 900)])
async def test_the_page_fits_the_screen(
    page: Page, sandbox: Sandbox, width: int, height: int
) -> None:
    await page.set_viewport_size({"width": width, "height": height})
    await open_game(page, ANN, [BOB])
    await expect(page.locator("#add-robot")).to_be_visible()
    for control in ("#status", "#flood-switch", "#add-person button", "#add-robot button"):
        await expect(page.locator(control)).to_be_visible()
    await expect(page.get_by_role("button", name="10 min")).to_be_visible()
    measured = await page.evaluate(FITS_THE_WIDTH)
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"page-{width}x{height}.png"))
    await page.screenshot(path=str(ARTIFACTS / f"page-{width}x{height}-full.png"), full_page=True)
    assert measured["scrollWidth"] <= measured["innerWidth"], measured
    assert measured["outside"] == [], measured


async def _platform_fonts(page: Page, selector: str) -> list[dict[str, object]]:
    """The fonts Chromium really drew a node's text with (not what the style asks for)."""
    session = await page.context.new_cdp_session(page)
    await session.send("DOM.enable")
    await session.send("CSS.enable")
    document = await session.send("DOM.getDocument", {"depth": -1})
    found = await session.send(
        "DOM.querySelector", {"nodeId": document["root"]["nodeId"], "selector": selector}
    )
    fonts = await session.send("CSS.getPlatformFontsForNode", {"nodeId": found["nodeId"]})
    await session.detach()
    return list(fonts["fonts"])


@pytest.mark.parametrize(
    ("text", "family"),
    [
        pytest.param("สวัสดี ไพ่ใบนี้", "Noto Sans Thai", id="thai"),
        pytest.param("مرحبا بالجميع", "Noto Sans Arabic", id="arabic"),
    ],
)
async def test_thai_and_arabic_are_drawn_with_the_served_fonts(
    page: Page, sandbox: Sandbox, text: str, family: str
) -> None:
    ann = pane(page, ANN)
    await send(ann, text)
    body = message(ann, text).locator(".body")
    await expect(body).to_be_visible()
    await page.evaluate("() => document.fonts.ready")
    marked = await body.evaluate("node => { node.id = 'checked-text'; return node.id; }")
    await page.wait_for_function(
        "(family) => [...document.fonts].some((f) => f.family.replaceAll('\"', '') === family"
        " && f.status === 'loaded')",
        arg=family,
    )
    fonts = await _platform_fonts(page, f"#{marked}")
    drawn_with = {str(font["familyName"]) for font in fonts if font["isCustomFont"]}
    assert family in drawn_with, fonts


@pytest.mark.skipif(
    not shutil.which("fc-list")
    or "Noto Color Emoji"
    not in subprocess.run(
        ["fc-list", ":family"], capture_output=True, text=True, check=False
    ).stdout,
    reason="no system emoji font here (apt-get install fonts-noto-color-emoji)",
)
async def test_an_emoji_is_drawn_with_the_systems_emoji_font_and_a_card_suit_as_text(
    page: Page, sandbox: Sandbox
) -> None:
    ann = pane(page, ANN)
    for text, expected in (("🃏🎉", "Noto Color Emoji"), ("♠♥", "DejaVu Sans")):
        await send(ann, text)
        body = message(ann, text).locator(".body")
        await expect(body).to_be_visible()
        await page.evaluate("() => document.fonts.ready")
        marked = await body.evaluate("node => { node.id = 'checked-text'; return node.id; }")
        fonts = await _platform_fonts(page, f"#{marked}")
        await body.evaluate("node => node.removeAttribute('id')")
        assert [str(font["familyName"]) for font in fonts] == [expected], fonts


async def test_thai_typed_in_the_composer_is_drawn_with_the_served_font(
    page: Page, sandbox: Sandbox
) -> None:
    """Buttons and text boxes take their own font in Chromium unless told to inherit the page's:
    Thai there was drawn as empty boxes on a machine without a Thai font."""
    composer = pane(page, ANN).locator(".text")
    await composer.fill("สวัสดี ไพ่ใบนี้")
    await page.wait_for_function(
        "() => [...document.fonts].some((f) => f.family.replaceAll('\"', '') === 'Noto Sans Thai'"
        " && f.status === 'loaded')"
    )
    marked = await composer.evaluate("node => { node.id = 'checked-input'; return node.id; }")
    fonts = await _platform_fonts(page, f"#{marked}")
    assert "Noto Sans Thai" in {str(font["familyName"]) for font in fonts}, fonts
