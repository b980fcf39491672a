"""A restarted sandbox goes on where it stopped: the bot answers at once, a lobby comes back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from telesnap.sandbox.app import Sandbox
from telesnap.sandbox.robots import read_board

from .helpers import BOB, GROUP_ID, Players, running_sandbox


async def ask_for_help_three_times(sandbox: Sandbox) -> None:
    table = Players(sandbox)
    try:
        for _ in range(3):
            sent = await table.command("Ann", "/help")
            await table.wait_for("/newgame", after=sent)
    finally:
        await table.close()


async def bob_is_answered(sandbox: Sandbox) -> None:
    table = Players(sandbox)
    try:
        sent = await table.command("Bob", "/rules")
        async with asyncio.timeout(15):
            answer = await table.client.wait_for_message(
                GROUP_ID, lambda m: m.message_id > sent and m.sender_id != BOB
            )
        assert answer.text
    finally:
        await table.close()


async def test_a_message_after_a_restart_is_answered(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path, roster=True) as first:
        await ask_for_help_three_times(first)
    async with running_sandbox(tmp_path, roster=True) as second:
        await bob_is_answered(second)


async def test_a_message_is_answered_after_a_crash_kept_the_last_updates_from_being_saved(
    tmp_path: Path,
) -> None:
    saved = tmp_path / "sandbox.db.sandbox.json"
    async with running_sandbox(tmp_path, roster=True) as first:
        await ask_for_help_three_times(first)
    data = json.loads(saved.read_text(encoding="utf-8"))
    data["last_update_id"] = 1  # saved before the last two updates, then killed
    saved.write_text(json.dumps(data), encoding="utf-8")
    async with running_sandbox(tmp_path, roster=True) as second:
        await bob_is_answered(second)


async def test_an_open_lobby_comes_back_with_extend_after_a_restart(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path, roster=True) as first:
        table = Players(first)
        try:
            sent = await table.command("Ann", "/newgame")
            lobby = await table.wait_for("A game of Snap is starting", after=sent)
            await table.press("Bob", lobby, "Join")
            await table.wait_for("• Bob", after=sent)
        finally:
            await table.close()
    async with running_sandbox(tmp_path, roster=True) as second:
        # First what brings the open game back: /newgame there only says a game is open.
        assert second.overview()["hint"] == (
            "A game was open in Snap club when the sandbox stopped: send /extend in Ann's pane "
            "there to bring it back (or /startgame to start it). For a new game elsewhere, "
            "send /newgame in Ann's pane, press Join in Bob's pane, then Start in Ann's."
        )
        table = Players(second)
        try:
            sent = await table.command("Ann", "/extend")
            lobby = await table.wait_for("A game of Snap is starting", after=sent)
            assert lobby.text.splitlines()[1:3] == ["• Ann", "• Bob"]
            assert lobby.button_texts == ["Join", "Leave", "Start"]
            await table.press("Ann", lobby, "Start")
            board = await table.latest_board(after=lobby.message_id)
            assert read_board(board.text).turn in {"Ann", "Bob"}
        finally:
            await table.close()


async def test_a_restart_with_no_lobby_open_does_not_speak_of_one(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path, roster=True) as first:
        await ask_for_help_three_times(first)
    async with running_sandbox(tmp_path, roster=True) as second:
        assert second.overview()["hint"] == (
            "Send /newgame in Ann's pane to open a game of Snap, "
            "press Join in Bob's pane, then Start in Ann's."
        )
