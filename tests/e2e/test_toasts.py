"""A toast survives a 5xx, a 429 or a dropped connection on answerCallbackQuery."""

from __future__ import annotations

from pathlib import Path

import pytest

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with


@pytest.mark.parametrize("fault", ["server_error", "bad_gateway", "retry_after", "timeout"])
async def test_a_press_is_answered_after_a_failed_answer(
    emulator: RunningEmulator, tmp_path: Path, fault: str
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        await table.client.inject_fault("answerCallbackQuery", fault, retry_after=1, hold=0.2)
        toast = await table.press(board.turn, board.message, "Flip")
        assert toast.is_answered
        answers = await table.client.calls("answerCallbackQuery")
        tries = [c for c in answers if c.params["callback_query_id"] == toast.callback_query_id]
        assert [c.fault for c in tries] == [fault, None]
        after = await table.next_board()
        assert f"{board.turn} flips" in after.message.text
