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


async def test_a_toast_is_still_tried_ten_seconds_after_its_press(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The README: retried until 3 s before the press expires (15 s after it), not sooner."""
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        # Five 429s asking for 2 s each: the sixth try comes about 10 s after the press.
        await table.client.inject_fault(
            "answerCallbackQuery", "retry_after", count=5, retry_after=2
        )
        query_id = await table.client.press(
            table.chat_id, board.message.message_id, table.players[board.turn], button_text="Flip"
        )
        await table.client.wait_for_toast(callback_query_id=query_id, timeout=14)
        tries = [
            call.fault
            for call in await table.client.calls("answerCallbackQuery")
            if call.params["callback_query_id"] == query_id
        ]
        assert tries == ["retry_after"] * 5 + [None]
        assert f"{board.turn} flips" in (await table.next_board()).message.text
