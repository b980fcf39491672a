"""A tidy chat in both board styles, under Telegram's flood limits (scaled down).

Message style: each flip stays a message, only the newest board (and the one
before it, until the next send) has buttons, and an ended game keeps none for
more than a minute. Live style: the game is one message, edited in place.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from telesnap.bot.delivery.pace import FloodLimits as BotFloodLimits
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator, running_emulator

from .board_timeline import boards_with_buttons, ended_at, is_board, most_with_buttons
from .harness import Table, database_file, read_board, table_with

MINUTE = 3.0
"""Telegram's minute, scaled down 20 times (its 20 messages a minute with it)."""
TELEGRAM = TelegramFloodLimits(group_window_seconds=MINUTE)
BOT = BotFloodLimits(group_window_s=MINUTE + 0.05)
FLIPS = 12


@asynccontextmanager
async def fast_table(tmp_path: Path, board_style: str) -> AsyncIterator[Table]:
    """Ann and Bob in a group under the scaled limits, their game ending after FLIPS flips."""
    async with (
        running_emulator(EmulatorConfig(flood=TELEGRAM)) as emulator,
        table_with(
            emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"], limits=BOT
        ) as table,
    ):
        settings = [f"flip_limit {FLIPS}"]
        if board_style != "messages":  # the default
            settings.append(f"board_style {board_style}")
        for setting in settings:
            saved = await table.reply_to(await table.command("Ann", "settings", setting))
            assert "Saved." in saved.text
        yield table
        assert await emulator.client.violations() == []
        refused = [call for call in await emulator.client.calls() if call.status == 429]
        assert refused == [], f"{len(refused)} sends refused with a 429"


async def play_to_the_end(
    table: Table, stale_toasts: list[str] | None = None
) -> list[TranscriptMessage]:
    """Open, start, and flip on each board as soon as it arrives, until the game ends.

    With ``stale_toasts``: halfway, the player who flipped last presses that Flip again,
    as on a table an edit has replaced meanwhile; the answer is added to the list.
    """
    await table.open_and_start(["Ann", "Bob"])
    pressed: set[str] = set()
    last: tuple[int, str, str] | None = None

    async def fresh_flip() -> tuple[TranscriptMessage, str] | None:
        for message in reversed(await table.messages()):
            for row in message.buttons:
                for button in row:
                    data = str(button.get("callback_data", ""))
                    if data.startswith("f:") and data not in pressed:
                        return message, data
        return None

    for index in range(FLIPS):
        message, data = await table.client.wait_for(fresh_flip, timeout=30, what="a new board")
        if stale_toasts is not None and index == FLIPS // 2 and last is not None:
            message_id, old_data, player = last
            query = await table.client.press(
                table.chat_id, message_id, table.players[player], data=old_data, forged=True
            )
            toast = await table.client.wait_for_toast(callback_query_id=query)
            stale_toasts.append(toast.text or "")
        pressed.add(data)
        turn = read_board(message).turn
        assert turn is not None
        await table.client.press(table.chat_id, message.message_id, table.players[turn], data=data)
        last = (message.message_id, data, turn)
    await table.wait_for_text("final standings", limit_s=30)

    async def buttons_gone() -> bool | None:
        return True if not any(m.buttons for m in await table.messages()) else None

    await table.client.wait_for(buttons_gone, timeout=30, what="every button taken off")
    return await table.messages()


async def test_in_message_style_only_the_newest_boards_keep_buttons(tmp_path: Path) -> None:
    async with fast_table(tmp_path, "messages") as table:
        messages = await play_to_the_end(table)
        boards = [m for m in messages if is_board(m)]
        assert len(boards) > 2, "each flip stays a message of its own"
        assert most_with_buttons(boards) <= 2, "never more than the newest and the one before"
        end = ended_at(messages)
        assert end is not None
        assert boards_with_buttons(boards, end + MINUTE) == 0, "none a minute after the end"


async def test_in_live_style_the_game_is_one_message_edited_to_its_end(tmp_path: Path) -> None:
    async with fast_table(tmp_path, "live") as table:
        stale_toasts: list[str] = []
        messages = await play_to_the_end(table, stale_toasts)
        boards = [m for m in messages if is_board(m)]
        assert len(boards) == 1, "one message for the whole game"
        (board,) = boards
        assert "final standings" in board.text
        assert len(board.history) >= 2, "edited in place as the game went on"
        assert board.buttons == []
        assert "flips" in board.text, "the last events stay above the standings"
        assert stale_toasts == ["The table changed before your press arrived: look again."]


async def the_one_live_board(table: Table) -> list[int]:
    """Once a single message of the chat has buttons: its id, alone in a list."""

    async def one_live_board() -> list[int] | None:
        live = [m.message_id for m in await table.messages() if m.buttons]
        return live if len(live) == 1 else None

    live: list[int] = await table.client.wait_for(one_live_board, what="one board with buttons")
    return live


async def test_after_a_restart_the_board_shown_before_it_loses_its_buttons(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        before = await table.next_board()
        await table.stop_bot()
        await table.start_bot()  # a cold start shows every running game's table again
        again = await table.next_board()
        live = await the_one_live_board(table)
        assert live == [again.message.message_id]
        assert before.message.message_id != again.message.message_id


async def test_a_board_shown_again_for_a_wrong_call_loses_its_buttons_once_across_a_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    # A wrong call shows the same board version again, as a new message: the one
    # before loses its buttons then. After a restart, the next board must bare the
    # wrong call's message, not the first message of that version a second time
    # (Telegram answers that edit "message is not modified").
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        flipped = await table.next_board()
        caller = "Ann" if flipped.turn == "Bob" else "Bob"
        await table.press(caller, flipped.message, "Snap!")  # one card up: no match
        wrong = await table.next_board()
        await table.stop_bot()
        await table.start_bot()  # a cold start shows every running game's table again
        again = await table.next_board()
        assert again.turn is not None
        await table.press(again.turn, again.message, "Flip")
        last = await table.next_board()
        live = await the_one_live_board(table)
        assert live == [last.message.message_id]
        assert wrong.message.message_id not in live
        assert await table.client.violations() == []
