"""Presses on a live board (one message per game, edited in place): a Snap race works."""

from __future__ import annotations

from pathlib import Path

import pytest

from telesnap.emulator.client import Press
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .board_timeline import is_board
from .harness import Board, Table, database_file, read_board, table_with


def flip_data(message: TranscriptMessage) -> str | None:
    return next(
        (
            str(button["callback_data"])
            for row in message.buttons
            for button in row
            if str(button.get("callback_data", "")).startswith("f:")
        ),
        None,
    )


async def edited(table: Table, message_id: int, old_data: str | None) -> Board:
    """The live board once an edit has given it a new table (new buttons)."""

    async def probe() -> TranscriptMessage | None:
        for message in await table.messages():
            if message.message_id == message_id and flip_data(message) != old_data:
                return message
        return None

    return read_board(await table.client.wait_for(probe, what="the live board edited"))


async def test_a_snap_race_on_a_live_board_is_decided_in_the_same_message(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    names = ["Ann", "Bob", "Cid"]
    async with table_with(emulator, database_file(tmp_path), names, admins=["Ann"]) as table:
        saved = await table.reply_to(await table.command("Ann", "settings", "board_style live"))
        assert "Saved." in saved.text
        board = await table.open_and_start(names)
        live_id = board.message.message_id
        for _ in range(80):
            if board.has_match:
                break
            assert board.turn is not None
            old = flip_data(board.message)
            await table.press(board.turn, board.message, "Flip")
            board = await edited(table, live_id, old)
        else:
            pytest.fail("no match showed in 80 flips")
        presses = [
            Press(table.chat_id, live_id, table.players["Ann"], button_text="Snap!"),
            Press(table.chat_id, live_id, table.players["Bob"], button_text="Snap!", offset=0.5),
        ]
        query_ids = await table.client.press_many(presses)
        toasts = [await table.client.wait_for_toast(callback_query_id=q) for q in query_ids]
        assert "You won the race" in (toasts[0].text or "")
        assert "Too slow" in (toasts[1].text or "")
        won = await table.wait_for_text("wins the Snap")
        assert won.message_id == live_id, "the race's result is shown in the game's one message"
        assert [m.message_id for m in await table.messages() if is_board(m)] == [live_id]
