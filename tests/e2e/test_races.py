"""Snap races through the emulator: decided by receipt order and the tie window."""

from __future__ import annotations

from pathlib import Path

import pytest

from telesnap.emulator.client import Press
from telesnap.emulator.testing import RunningEmulator

from .harness import Board, Table, database_file, table_with


async def flip_until_match(table: Table, board: Board) -> Board:
    for _ in range(80):
        if board.has_match:
            return board
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        board = await table.next_board()
    pytest.fail("no match showed in 80 flips")


async def race(table: Table, first: str, second: str, gap_s: float) -> dict[str, str]:
    """``first`` then ``second`` press Snap! ``gap_s`` apart; return each one's toast."""
    board = await flip_until_match(table, await table.latest_board())
    presses = [
        Press(table.chat_id, board.message.message_id, table.players[first], button_text="Snap!"),
        Press(
            table.chat_id,
            board.message.message_id,
            table.players[second],
            button_text="Snap!",
            offset=gap_s,
        ),
    ]
    query_ids = await table.client.press_many(presses)
    toasts = [await table.client.wait_for_toast(callback_query_id=q) for q in query_ids]
    return {first: toasts[0].text, second: toasts[1].text}


async def deliveries_apart(table: Table) -> bool:
    """Whether the last two updates reached the bot in separate getUpdates answers."""
    last_two = (await table.client.updates())[-2:]
    first, second = (update.deliveries[0].at for update in last_two)
    return second > first


@pytest.mark.parametrize(
    ("window", "first_toast", "second_toast"),
    [(100, "A tie", "A tie"), (20, "You win", "Too slow by")],
)
@pytest.mark.parametrize("order", ["ann-first", "bob-first"])
async def test_presses_40_ms_apart_tie_or_win_by_the_tie_window(
    emulator: RunningEmulator,
    tmp_path: Path,
    window: int,
    first_toast: str,
    second_toast: str,
    order: str,
) -> None:
    first, second = ("Ann", "Bob") if order == "ann-first" else ("Bob", "Ann")
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", f"tie_window {window}")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        toasts = await race(table, first, second, gap_s=0.040)
        assert await deliveries_apart(table), "the two presses reached the bot together"
        assert first_toast in toasts[first]
        assert second_toast in toasts[second]
        after = await table.next_board()
        if window == 100:
            assert "called together" in after.message.text
            assert "Snap Pot:" in after.message.text
        else:
            assert f"{first} wins the Snap" in after.message.text
            behind = int(toasts[second].split("by ")[1].split(" ms")[0])
            assert behind > window


async def test_presses_in_one_batch_go_to_the_lower_update_id_with_no_tie_window(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 0")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        await table.client.pause_delivery()
        cid = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Cid"], button_text="Snap!"
        )
        bob = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Bob"], button_text="Snap!"
        )
        await table.client.resume_delivery()
        assert (await table.client.wait_for_toast(callback_query_id=cid)).text == "⚡ You win!"
        bob_toast = await table.client.wait_for_toast(callback_query_id=bob)
        assert bob_toast.text == "🐢 Too slow by 0 ms."
