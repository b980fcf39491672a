"""The sandbox page in a real browser: a game played by clicking, races, toasts, timers, scripts."""

from __future__ import annotations

import re

from playwright.async_api import Page, expect

from telesnap.sandbox.app import Sandbox
from tests.sandbox.helpers import ANN, BOB, Players

from .conftest import ARTIFACTS, LOOP
from .page_helpers import (
    latest_board,
    message,
    open_game,
    pane,
    send,
    wait_for_next_board,
)

pytestmark = LOOP


async def test_two_people_and_a_robot_play_a_whole_game_by_clicking(
    page: Page, sandbox: Sandbox
) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await send(ann, "/settings flip_limit 10")
    await message(ann, "Flip limit: 10").wait_for()
    await page.fill("#add-robot input[name=first_name]", "Robo")
    await page.fill("#add-robot input[name=reaction_ms]", "80")
    await page.fill("#add-robot input[name=jitter_ms]", "20")
    await page.fill("#add-robot input[name=wrong_rate]", "0")
    await page.click("#add-robot button")
    robot = page.locator(".pane", has=page.locator(".robot-badge:visible"))
    await expect(robot.locator(".name")).to_have_value("Robo")

    await send(ann, "/newgame")
    lobby = message(bob, "A game of Snap is starting")
    await lobby.get_by_role("button", name="Join").click()
    await expect(message(ann, "A game of Snap is starting")).to_contain_text("• Robo")
    await message(ann, "A game of Snap is starting").get_by_role("button", name="Start").click()

    people = {"Ann": ann, "Bob": bob}
    for flips in range(200):
        key, text, board = await latest_board(ann)
        if board.turn is None:
            break
        if flips == 4:
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "game-in-progress.png"))
        if board.turn in people:
            player = people[board.turn].locator(f'.message[data-key="{key}"]')
            await player.get_by_role("button", name="Flip").click()
        await wait_for_next_board(page, ANN, key, text)
    else:
        raise AssertionError("the game did not end")
    assert re.search(r"\S wins", text), text
    for person in (ann, bob, robot):
        await expect(message(person, re.compile(r"\S wins")).last).to_be_visible()


async def test_a_tie_into_the_snap_pot_is_shown_on_the_race_timeline(
    page: Page, sandbox: Sandbox
) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await send(ann, "/settings tie_window 2000")
    await message(ann, "Tie window: 2000 ms").wait_for()
    await open_game(page, ANN, [BOB])
    people = {"Ann": ann, "Bob": bob}
    for _ in range(200):
        key, text, board = await latest_board(ann)
        assert board.turn is not None, "the game ended without a match"
        if board.has_match:
            break
        await (
            people[board.turn]
            .locator(f'.message[data-key="{key}"]')
            .get_by_role("button", name="Flip")
            .click()
        )
        await wait_for_next_board(page, ANN, key, text)
    for person in (ann, bob):
        await (
            person.locator(f'.message[data-key="{key}"]')
            .get_by_role("button", name="Snap!", exact=True)
            .click()
        )
    tie = page.locator('#races .race[data-outcome="tied"]')
    await expect(tie).to_contain_text("A tie: Ann, Bob; the piles go into the Snap Pot")
    await expect(tie).to_contain_text("Ann")
    await expect(tie).to_contain_text("Bob")
    await expect(tie.locator(".call.tied")).to_have_count(2)
    await expect(tie).to_contain_text("tie window 2000 ms")
    await wait_for_next_board(page, ANN, key, text)
    _, after, _ = await latest_board(ann)
    assert "Snap Pot:" in after


async def test_a_toast_appears_only_on_the_pane_of_who_pressed(
    page: Page, sandbox: Sandbox
) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await send(ann, "/newgame")
    await message(bob, "A game of Snap is starting").get_by_role("button", name="Join").click()
    await expect(bob.locator(".toast")).to_have_text("You joined the game.")
    await expect(ann.locator(".toast")).to_have_count(0)


async def test_an_edited_message_updates_in_place(page: Page, sandbox: Sandbox) -> None:
    ann, bob = pane(page, ANN), pane(page, BOB)
    await send(ann, "/newgame")
    lobby = message(ann, "A game of Snap is starting")
    await lobby.wait_for()
    key = await lobby.get_attribute("data-key")
    keys_before = await ann.locator(".message").evaluate_all("ms => ms.map(m => m.dataset.key)")
    await message(bob, "A game of Snap is starting").get_by_role("button", name="Join").click()
    in_place = ann.locator(f'.message[data-key="{key}"]')
    await expect(in_place).to_contain_text("• Bob")
    await expect(in_place.locator(".meta")).to_contain_text("edited")
    await expect(in_place).to_have_count(1)
    keys_after = await ann.locator(".message").evaluate_all("ms => ms.map(m => m.dataset.key)")
    assert keys_after[: len(keys_before)] == keys_before


async def test_a_stats_chart_appears_as_a_picture(page: Page, sandbox: Sandbox) -> None:
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
    picture = ann.locator(".message img")
    await expect(picture).to_be_visible()
    width = await picture.evaluate("img => img.complete ? img.naturalWidth : 0")
    assert width > 100
    async with page.context.expect_page() as opened:  # drawn small in a pane: a click opens it
        await picture.click()
    whole = await opened.value
    await whole.wait_for_load_state()
    assert whole.url == await picture.evaluate("img => img.src")
    assert (await whole.evaluate("document.contentType")).startswith("image/"), "the picture"
    await whole.close()


async def test_skipping_ten_minutes_shows_the_reminder_and_the_auto_flip(
    page: Page, sandbox: Sandbox
) -> None:
    ann = pane(page, ANN)
    await open_game(page, ANN, [BOB])
    _, _, board = await latest_board(ann)
    away = board.turn
    assert away is not None
    await page.get_by_role("button", name="10 min").click()
    await expect(page.locator("#clock-skipped")).to_have_text("+10 min")
    await expect(message(ann, "it is your turn")).to_contain_text(away)
    await expect(message(ann, f"{away} was away, so I flipped for them.")).to_be_visible()


async def test_an_arabic_chat_reads_right_to_left(page: Page, sandbox: Sandbox) -> None:
    ann = pane(page, ANN)
    await ann.locator(".language").select_option("ar")
    await expect(ann.locator(".language")).to_have_value("ar")
    await page.wait_for_function(
        "() => fetch('/_emulator/state').then(r => r.json())"
        ".then(s => s.users.some(u => u.id === 1001 && u.language_code === 'ar'))"
    )
    await send(ann, "/newgame")
    lobby = ann.locator(".message", has=page.locator(".keyboard")).last
    await expect(lobby.locator(".body")).to_contain_text(re.compile("[\u0600-\u06ff]"))
    assert await lobby.locator(".body").evaluate("body => body.matches(':dir(rtl)')")
    direction = await lobby.locator(".body").evaluate("body => getComputedStyle(body).direction")
    assert direction == "rtl"


async def test_a_person_named_like_html_shows_literally(page: Page, sandbox: Sandbox) -> None:
    name = "<b>&amp;</b>"
    await page.fill("#add-person input[name=first_name]", name)
    await page.click("#add-person button")
    newcomer = page.locator(".pane").nth(2)
    await expect(newcomer.locator(".name")).to_have_value(name)
    await send(newcomer, "/newgame")
    lobby = message(pane(page, ANN), "A game of Snap is starting")
    await expect(lobby.locator(".body")).to_contain_text(f"• {name}")
    await expect(lobby.locator(".sender")).to_have_text("Telesnap Test")
    await expect(message(pane(page, ANN), "/newgame").locator(".sender")).to_have_text(name)
    assert await lobby.locator(".body b").count() == 0
