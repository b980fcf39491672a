"""A whole game played through the emulator, as people would play it."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with


async def test_three_players_play_a_whole_game_to_the_end(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "flip_limit 30")
        await table.wait_for_text("Saved.")
        board = await table.open_and_start(["Ann", "Bob", "Cid"])
        assert set(board.tops) == {"Ann", "Bob", "Cid"}
        snaps = 0
        for _ in range(200):
            if board.turn is None:
                break
            if board.has_match:
                toast = await table.press("Bob", board.message, "Snap!")
                assert "won the race" in toast.text or "slow" in toast.text.lower()
                snaps += 1
            else:
                toast = await table.press(board.turn, board.message, "Flip")
                assert toast.text == ""
            board = await table.next_board()
        final = board.message.text
        assert " wins" in final
        assert board.message.reply_markup is None
        assert snaps >= 1
        await table.command("Ann", "help")  # and an update no handler changes anything for
        await table.wait_for_text("/newgame")
        await table.client.wait_until_idle()
        assert table.runner is not None
        assert table.runner.runtime is not None
        assert table.runner.runtime.book.held() == 0
