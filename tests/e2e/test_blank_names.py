"""Names players cannot tell apart: one that shows nothing, or one two seats share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file

BLANK = "\u3164"
"""HANGUL FILLER: a letter drawn as nothing, a common "empty" Telegram name."""


@asynccontextmanager
async def started_game(
    emulator: RunningEmulator, tmp_path: Path, people: dict[str, dict[str, Any]]
) -> AsyncIterator[tuple[Table, TranscriptMessage]]:
    """A group of ``people`` (a key: their Telegram user), the first of whom opens a game that
    all join and she starts; the table, and its lobby as it was full."""
    client = emulator.client
    players = {key: int((await client.create_user(**user))["id"]) for key, user in people.items()}
    chat = await client.create_chat("group", title="Snap club", members=list(players.values()))
    table = Table(emulator, database_file(tmp_path), int(chat["id"]), players)
    opener, *others = players
    await table.start_bot()
    try:
        await table.command(opener, "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        for player in others:
            await table.press(player, lobby, "Join")
        full = await table.wait_for_text(f"Players ({len(players)}/12)")
        await table.command(opener, "startgame")
        yield table, full
    finally:
        await table.stop_bot()


async def test_a_blank_looking_name_is_shown_as_the_username_or_a_sign(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    people = {
        "Ann": {"first_name": "Ann"},
        "Quiet": {"first_name": BLANK, "username": "quiet_one"},
        "Nobody": {"first_name": BLANK, "last_name": "\u200b"},
    }
    async with started_game(emulator, tmp_path, people) as (table, _):
        board = await table.next_board()
        await table.command("Ann", "endgame")
        await table.wait_for_text("was stopped")
        await table.command("Ann", "history")
        history = await table.wait_for_text("stopped: nobody won")
    for text in (board.message.text, history.text):
        assert "@quiet_one" in text
        assert "👤" in text
        assert BLANK not in text


async def test_two_players_of_one_name_are_told_apart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Someone who takes a player's name before joining cannot pass for them."""
    people = {
        "Ann": {"first_name": "Ann", "username": "ann_real"},
        "Mal": {"first_name": "Ann"},
        "Bob": {"first_name": "Bob"},
    }
    async with started_game(emulator, tmp_path, people) as (table, lobby):
        board = await table.next_board()
    for text in (lobby.text, board.message.text):
        assert "Ann (@ann_real)" in text
        assert "Ann (2)" in text
