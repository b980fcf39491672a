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
    finally:
        await table.stop_bot()
    assert "@quiet_one" in board.message.text
    assert "👤" in board.message.text
    assert f"{BLANK}" not in board.message.text
