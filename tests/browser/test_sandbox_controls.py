"""The page's controls in a real browser: the command menu, flood limits and the call log."""

from __future__ import annotations

import dataclasses
import re

from playwright.async_api import Browser, Page, expect

from telesnap.bot.handlers.menu import command_descriptions
from telesnap.bot.render.i18n import translator
from telesnap.sandbox.app import Sandbox
from tests.sandbox.helpers import ANN, BOB

from .conftest import LOOP, open_page
from .page_helpers import message, pane, send

pytestmark = LOOP


async def test_typing_a_slash_shows_the_menu_the_bot_published_in_the_persons_language(
    page: Page, sandbox: Sandbox
) -> None:
    ann = pane(page, ANN)
    await ann.locator(".text").fill("/new")
    menu = ann.locator(".command-menu")
    await expect(menu).to_be_visible()
    await expect(menu.locator("li")).to_have_text(["/newgameOpen a game here"])
    await menu.locator("li").first.dispatch_event("mousedown")
    await expect(ann.locator(".text")).to_have_value("/newgame ")
    await ann.locator(".language").select_option("es")
    await ann.locator(".text").fill("/")
    await ann.locator(".text").focus()
    spanish = command_descriptions(translator("es"))["newgame"]
    assert spanish != "Open a game here"
    await expect(menu.locator("li", has_text="/newgame")).to_have_text(f"/newgame{spanish}")


async def test_with_flood_limits_on_a_refused_call_shows_in_the_log(
    page: Page, sandbox: Sandbox
) -> None:
    flood = sandbox.emulator.flood
    flood.limits = dataclasses.replace(flood.limits, group_per_minute=2)
    switch = page.locator("#flood-switch")
    await expect(switch).not_to_be_checked()
    await switch.check()
    await page.wait_for_function(
        "() => fetch('/_emulator/state').then(r => r.json()).then(s => s.flood_limits)"
    )
    ann = pane(page, ANN)
    for _ in range(3):
        await send(ann, "/help")
    await expect(page.locator("#log li.flood").first).to_contain_text("429")
    await expect(page.locator("#flood-count")).to_have_text(re.compile(r"^\d+ × 429$"))
    await expect(message(ann, "/help").first).to_be_visible()


EDGES = "ps => ps.map(p => Math.round(p.getBoundingClientRect().{edge}))"


async def test_four_people_fit_side_by_side_on_a_laptop_and_stack_on_a_phone(
    page: Page, sandbox: Sandbox
) -> None:
    for name in ("Cid", "Dee"):
        await page.fill("#add-person input[name=first_name]", name)
        await page.click("#add-person button")
    panes = page.locator(".pane")
    await expect(panes).to_have_count(4)
    await page.set_viewport_size({"width": 1366, "height": 768})
    tops = await panes.evaluate_all(EDGES.format(edge="top"))
    assert len(set(tops)) == 1, tops
    await page.set_viewport_size({"width": 400, "height": 800})
    lefts = await panes.evaluate_all(EDGES.format(edge="left"))
    tops = await panes.evaluate_all(EDGES.format(edge="top"))
    assert len(set(lefts)) == 1, lefts
    assert tops == sorted(tops), tops
    assert len(set(tops)) == 4, tops


async def test_a_rename_shows_in_every_pane_and_reaches_the_bot(
    page: Page, sandbox: Sandbox
) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await send(bob, "hi all")
    await message(ann, "hi all").wait_for()
    await bob.locator(".name").fill("Бобби ✨ ビ")
    await bob.locator(".name").press("Enter")
    await expect(message(ann, "hi all").locator(".sender")).to_have_text("Бобби ✨ ビ")
    await send(ann, "/newgame")
    await message(bob, "A game of Snap is starting").get_by_role("button", name="Join").click()
    await expect(message(ann, "A game of Snap is starting")).to_contain_text("• Бобби ✨ ビ")


async def test_forum_topics_are_tabs_and_each_person_has_a_private_chat(
    page: Page, sandbox: Sandbox
) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await ann.get_by_role("tab", name="Snap forum › Table 1").click()
    await bob.get_by_role("tab", name="Snap forum › Table 1").click()
    await send(ann, "/newgame")
    await expect(message(bob, "A game of Snap is starting")).to_be_visible()
    await bob.get_by_role("tab", name="Snap forum › Table 2").click()
    await expect(bob.locator(".message")).to_have_count(0)
    await bob.get_by_role("tab", name="Snap club").click()
    await expect(bob.locator(".message")).to_have_count(0)
    await ann.get_by_role("tab", name="Telesnap Test").click()
    await expect(ann.locator(".chat-title")).to_contain_text("private chat with @telesnap_test_bot")
    await send(ann, "/help")
    await expect(ann.locator(".message.mine")).to_have_text(re.compile("/help"))
    await expect(ann.locator(".message:not(.mine)").first).to_be_visible()
    await bob.get_by_role("tab", name="Telesnap Test").click()
    await expect(bob.locator(".message")).to_have_count(0)


async def test_a_reload_keeps_the_chat_each_pane_shows(page: Page, sandbox: Sandbox) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await ann.get_by_role("tab", name="Snap forum › Table 1").click()
    await bob.get_by_role("tab", name="Telesnap Test").click()
    await page.reload()
    await page.locator("#status", has_text="live").wait_for()
    await expect(ann.get_by_role("tab", selected=True)).to_have_text("Snap forum › Table 1")
    await expect(bob.get_by_role("tab", selected=True)).to_have_text("Telesnap Test")
    await expect(bob.locator(".chat-title")).to_contain_text("private chat with @")


async def test_a_persons_network_delay_is_set_in_their_pane(page: Page, sandbox: Sandbox) -> None:
    ann = pane(page, ANN)
    await ann.locator(".network summary").click()
    await ann.locator(".network .delay").fill("80")
    await ann.locator(".network .jitter").fill("20")
    await ann.locator(".network .jitter").press("Enter")
    await ann.locator(".text").click()  # leaving the fields shows what the emulator holds
    await expect(ann.locator(".network summary")).to_have_text("network +80 ± 20 ms")
    link = sandbox.emulator.network[ANN]
    assert (link.delay_ms, link.jitter_ms) == (80, 20)
    await expect(pane(page, BOB).locator(".network summary")).to_have_text("network")


PANE_NAMES = "[...document.querySelectorAll('.pane .name')].map((input) => input.value)"


def people_named(sandbox: Sandbox, name: str) -> int:
    return sum(user.first_name == name for user in sandbox.emulator.world.users.values())


async def test_a_double_click_adds_one_person_and_one_robot(page: Page, sandbox: Sandbox) -> None:
    await page.fill("#add-person input[name=first_name]", "Dee")
    await page.dblclick("#add-person button")
    await page.fill("#add-robot input[name=first_name]", "Rob")
    await page.dblclick("#add-robot button")
    await page.fill("#add-person input[name=first_name]", "Eve")  # added after both, one click
    await page.click("#add-person button")
    await page.wait_for_function(f"() => ({PANE_NAMES}).includes('Eve')")
    names = await page.evaluate(PANE_NAMES)
    assert sorted(names) == ["Ann", "Bob", "Dee", "Eve", "Rob"]
    assert (people_named(sandbox, "Dee"), people_named(sandbox, "Rob")) == (1, 1)
    assert len(sandbox.robots.robots) == 1


async def test_a_long_call_keeps_its_log_line_on_one_row(page: Page, sandbox: Sandbox) -> None:
    calls = sandbox.emulator.calls
    answered = next(c for c in reversed(calls.values()) if c.answered_at is not None)
    calls[answered.sequence] = dataclasses.replace(
        answered, answered_at=answered.received_at + 30.001
    )  # as long as a long poll with nothing to hand over
    sandbox.emulator.changes.notify()
    line = page.locator("#log li", has_text="30001 ms")
    await expect(line).to_have_count(1)
    heights = await page.locator("#log li").evaluate_all(
        "lines => lines.map((l) => Math.round(l.getBoundingClientRect().height))"
    )
    assert len(set(heights)) == 1, heights


async def test_a_blank_name_is_refused_and_the_name_comes_back(
    page: Page, sandbox: Sandbox
) -> None:
    bob = pane(page, BOB)
    await bob.locator(".name").fill("   ")
    await bob.locator(".name").press("Enter")
    await expect(page.locator("#error")).to_contain_text("a name is 1-64 characters")
    await expect(bob.locator(".name")).to_have_value("Bob")
    assert sandbox.emulator.world.user(BOB).first_name == "Bob"


async def test_a_name_counts_characters_not_utf16_units(page: Page, sandbox: Sandbox) -> None:
    bob = pane(page, BOB)
    jokers = "🃏" * 40  # 80 UTF-16 units
    await bob.locator(".name").fill(jokers)
    await bob.locator(".name").press("Enter")
    await expect(bob.locator(".name")).to_have_value(jokers)
    renamed = sandbox.emulator.world.user(BOB)
    assert await sandbox.emulator.changes.wait_until(lambda: renamed.first_name == jokers, 10.0)
    await bob.locator(".name").fill("é" * 65)
    await bob.locator(".name").press("Enter")
    await expect(page.locator("#error")).to_contain_text("a name is 1-64 characters")
    await expect(bob.locator(".name")).to_have_value(jokers)
    await page.fill("#add-person input[name=first_name]", jokers)
    await page.click("#add-person button")
    await expect(page.locator(".pane .name")).to_have_count(3)
    assert people_named(sandbox, jokers) == 2


async def test_the_command_menu_works_from_the_keyboard(page: Page, sandbox: Sandbox) -> None:
    ann = pane(page, ANN)
    text, menu = ann.locator(".text"), ann.locator(".command-menu")
    await text.fill("/he")
    await expect(menu.locator("li")).to_have_count(1)
    await text.press("ArrowDown")
    await expect(menu.locator("li.active")).to_contain_text("/help")
    await text.press("Enter")
    await expect(text).to_have_value("/help ")
    await expect(menu).to_be_hidden()
    await text.fill("/")
    items = menu.locator("li")
    await expect(items.first).to_be_visible()
    first = await items.nth(0).locator("b").inner_text()
    second = await items.nth(1).locator("b").inner_text()
    await text.press("ArrowDown")
    await text.press("ArrowDown")
    await expect(menu.locator("li.active b")).to_have_text(second)
    await text.press("ArrowUp")
    await text.press("Tab")
    await expect(text).to_have_value(f"{first} ")
    await expect(text).to_be_focused()
    await text.fill("/")
    await expect(menu).to_be_visible()
    await text.press("Escape")
    await expect(menu).to_be_hidden()
    await expect(message(ann, "/he")).to_have_count(0)


async def test_a_refused_add_shows_the_error_line_and_raises_nothing(
    browser: Browser, sandbox: Sandbox
) -> None:
    name = "refused-add"
    async with open_page(browser, sandbox.page_url, name, refused_calls=True) as page:
        await page.fill("#add-robot input[name=reaction_ms]", "250")
        await page.fill("#add-robot input[name=jitter_ms]", "300")
        await page.click("#add-robot button")
        await expect(page.locator("#error")).to_contain_text("POST /_sandbox/robots")
        await page.fill("#add-person input[name=first_name]", "   ")
        await page.click("#add-person button")
        await expect(page.locator("#error")).to_contain_text("POST /_sandbox/people")
    assert len(sandbox.emulator.world.users) == 3, "nobody was added"


async def test_a_press_that_never_reaches_the_sandbox_says_so_in_the_error_line(
    browser: Browser, sandbox: Sandbox
) -> None:
    async with open_page(browser, sandbox.page_url, "unreachable", refused_calls=True) as page:
        ann, bob = pane(page, ANN), pane(page, BOB)
        await send(ann, "/newgame")
        join = message(bob, "A game of Snap is starting").get_by_role("button", name="Join")
        await page.route("**/_emulator/presses", lambda route: route.abort())
        await join.click()
        await expect(page.locator("#error")).to_have_text(
            "POST /_emulator/presses: the sandbox cannot be reached"
        )
