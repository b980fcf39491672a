"""A leaderboard of five players comes as a table picture, its text as the caption."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with
from .stats_helpers import play_short_game, wait_for_kind

NAMES = ["Ann", "Bob", "Cid", "Dee", "Eve"]


async def test_five_listed_players_get_a_picture_whose_buttons_still_work(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), NAMES, admins=["Ann"]) as table:
        await table.command("Ann", "settings", "flip_limit 10")
        await table.wait_for_text("Saved.")
        for _ in range(5):
            await play_short_game(table, NAMES, snapper="Bob")
        await table.command("Ann", "leaderboard")
        picture = await wait_for_kind(table, "photo", "Leaderboard: Rating")
        assert picture.file_size
        assert picture.file_size > 5000
        listed = [line for line in picture.text.splitlines() if " — " in line]
        assert len(listed) == 5
        assert {line.split(" — ")[0].split(". ")[1] for line in listed} == set(NAMES)
        assert "• Rating •" in picture.button_texts
        toast = await table.press("Ann", picture, "Wins")
        assert not toast.text  # answered at once, with no message
        call = await table.client.wait_for_call("editMessageMedia", lambda c: c.status is not None)
        assert call.status == 200, call.description
        assert int(call.params["message_id"]) == picture.message_id
