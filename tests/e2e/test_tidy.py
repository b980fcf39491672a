"""A tidy chat: boards whose turn has passed lose their buttons; none are left at the end."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with


async def test_old_boards_lose_their_buttons_and_the_end_leaves_none(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        board = await table.open_and_start(["Ann", "Bob", "Cid"])
        for _ in range(5):
            assert board.turn is not None
            await table.press(board.turn, board.message, "Flip")
            board = await table.next_board()
        await table.client.wait_until_idle()
        boards = [m for m in await table.messages() if "face-down" in m.text]
        assert len(boards) == 6
        # The game has gone quiet: its old boards lose their buttons at once.
        await table.client.wait_for_call(
            "editMessageReplyMarkup",
            lambda call: int(call.params["message_id"]) == boards[-3].message_id,
        )
        await table.client.wait_until_idle()
        boards = [m for m in await table.messages() if "face-down" in m.text]
        with_buttons = [m.message_id for m in boards if m.buttons]
        assert with_buttons == [m.message_id for m in boards[-2:]], "the newest two keep theirs"
        assert "Flip" in boards[-1].button_texts

        await table.command("Ann", "endgame")
        await table.wait_for_text("Nobody wins")
        await table.client.wait_until_idle()
        assert [m.message_id for m in await table.messages() if m.buttons] == []
        edits = await table.client.calls("editMessageReplyMarkup")
        assert len(edits) == len(boards), "each board's buttons are taken off once"
