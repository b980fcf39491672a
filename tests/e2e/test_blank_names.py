"""A name that shows nothing (a Hangul filler, invisible marks) never leaves players guessing."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file

BLANK = "\u3164"
"""HANGUL FILLER: a letter drawn as nothing, a common "empty" Telegram name."""


async def test_a_blank_looking_name_is_shown_as_the_username_or_a_sign(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    client = emulator.client
    ann = int((await client.create_user("Ann"))["id"])
    named = int((await client.create_user(BLANK, username="quiet_one"))["id"])
    unnamed = int((await client.create_user(BLANK, last_name="\u200b"))["id"])
    chat = await client.create_chat("group", title="Snap club", members=[ann, named, unnamed])
    players = {"Ann": ann, "Quiet": named, "Nobody": unnamed}
    table = Table(emulator, database_file(tmp_path), int(chat["id"]), players)
    await table.start_bot()
    try:
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        await table.press("Quiet", lobby, "Join")
        await table.press("Nobody", lobby, "Join")
        await table.wait_for_text("Players (3/12)")
        await table.command("Ann", "startgame")
        board = await table.next_board()
        await table.command("Ann", "endgame")
        await table.wait_for_text("was stopped")
        await table.command("Ann", "history")
        history = await table.wait_for_text("stopped: nobody won")
    finally:
        await table.stop_bot()
    for text in (board.message.text, history.text):
        assert "@quiet_one" in text
        assert "👤" in text
        assert BLANK not in text


async def test_two_players_of_one_name_are_told_apart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Someone who takes a player's name before joining cannot pass for them."""
    client = emulator.client
    ann = int((await client.create_user("Ann", username="ann_real"))["id"])
    mal = int((await client.create_user("Ann"))["id"])
    bob = int((await client.create_user("Bob"))["id"])
    chat = await client.create_chat("group", title="Snap club", members=[ann, mal, bob])
    table = Table(
        emulator, database_file(tmp_path), int(chat["id"]), {"Ann": ann, "Mal": mal, "Bob": bob}
    )
    await table.start_bot()
    try:
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        await table.press("Mal", lobby, "Join")
        await table.press("Bob", lobby, "Join")
        shown = await table.wait_for_text("Players (3/12)")
        await table.command("Ann", "startgame")
        board = await table.next_board()
    finally:
        await table.stop_bot()
    for text in (shown.text, board.message.text):
        assert "Ann (@ann_real)" in text
        assert "Ann (2)" in text
