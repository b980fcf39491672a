"""Boards held back by the flood limit: Flip on the newest board in the chat still works."""

from __future__ import annotations

from pathlib import Path

from telesnap.bot.delivery.pace import FloodLimits as BotFloodLimits
from telesnap.emulator.client import Press
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.testing import RunningEmulator, running_emulator

from .harness import PLAYER_LINE, Board, database_file, table_with

# Telegram's 20 messages a minute per group, scaled down to 4 every 5 seconds: the lobby,
# its two edits and the first board use them up, so the boards after it are held back.
TELEGRAM = TelegramFloodLimits(group_per_minute=4, group_window_seconds=5.0)
BOT = BotFloodLimits(group_messages=4, group_window_s=5.2)
OLD_MESSAGE = "This is an old message: use the newest one."


async def test_flip_on_the_newest_delivered_board_acts_while_newer_boards_are_held(
    tmp_path: Path,
) -> None:
    async with (
        running_emulator(EmulatorConfig(flood=TELEGRAM)) as emulator,
        table_with(emulator, database_file(tmp_path), ["Ann", "Bob"], limits=BOT) as table,
    ):
        board = await table.open_and_start(["Ann", "Bob"])
        first, second = (board.turn, "Bob" if board.turn == "Ann" else "Ann")
        assert first is not None
        assert (await table.press_action(second, board.message, "f")).text == (
            "It is not your turn to flip."
        )
        assert (await table.press_action(first, board.message, "f")).text == ""
        # The next board waits for the flood limit; the newest one in the chat is still
        # the first, and its Flip acts for the player whose turn has come.
        boards = [m for m in await table.messages() if "face-down" in m.text]
        assert [m.message_id for m in boards] == [board.message.message_id]
        assert (await table.press_action(second, board.message, "f")).text == ""
        # A second tap of the first player (on turn again) counts once: no third flip.
        repeat = await table.press_action(first, board.message, "f")
        assert repeat.text == "You pressed that already: it counts once."
        shown = await table.next_board(limit_s=15)
        assert shown.turn == first
        assert shown.message.text.count(" flips ") == 2
        toasts = [t.text for t in await emulator.client.toasts()]
        assert OLD_MESSAGE not in toasts
        assert await emulator.client.violations() == []


async def test_ten_snap_taps_within_100_ms_on_a_board_with_no_match_cost_one_card(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert not board.has_match
        presses = [
            Press(
                table.chat_id,
                board.message.message_id,
                table.players["Bob"],
                button_text="Snap!",
                offset=tap * 0.010,
            )
            for tap in range(10)
        ]
        query_ids = await table.client.press_many(presses)
        toasts = [(await table.client.wait_for_toast(callback_query_id=q)).text for q in query_ids]
        assert toasts.count("❌ No two face-up cards match! That call costs you a card.") == 1
        assert toasts.count("You pressed that already: it counts once.") == 9
        after = await table.next_board()
        assert after.message.text.count("Bob gives a card to Ann.") == 1
        assert face_down(after, "Bob") == face_down(board, "Bob") - 1
        # Nothing more comes: the nine repeats changed nothing.
        assert (await table.latest_board()).message.message_id == after.message.message_id


def face_down(board: Board, name: str) -> int:
    for line in board.message.text.splitlines():
        if (player := PLAYER_LINE.match(line)) and player["name"] == name:
            return int(player["down"])
    raise AssertionError(f"{name} is not on the board")
