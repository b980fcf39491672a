"""Menu and leaderboard buttons count only on the message that carries them, in their chat.

A modified client can send any callback data for any message of the bot. The
settings menu's and the leaderboard's buttons rewrite the message they are
pressed on, so their data, pressed on a board or in another chat, must change
nothing and be answered.
"""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with
from .test_settings import as_now, settings_menu

NOT_VALID = "This button is not valid."


def first_data(message: TranscriptMessage) -> str:
    data: str = message.buttons[0][0]["callback_data"]
    return data


async def forged_press(table: Table, player: str, message: TranscriptMessage, data: str) -> str:
    """``player`` sends ``data`` for ``message`` (of any chat they are in); the toast."""
    query_id = await table.client.press(
        message.chat_id, message.message_id, table.players[player], data=data, forged=True
    )
    return (await table.client.wait_for_toast(callback_query_id=query_id)).text


async def test_menu_and_leaderboard_buttons_pressed_on_a_board_leave_it_a_board(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        menu = await settings_menu(table, "Ann")
        await table.command("Ann", "leaderboard")
        leaderboard = await table.wait_for_text("Leaderboard")
        board = (await table.open_and_start(["Ann", "Bob"])).message
        before = await as_now(table, board)

        assert await forged_press(table, "Ann", board, first_data(menu)) == NOT_VALID
        assert await forged_press(table, "Ann", board, first_data(leaderboard)) == NOT_VALID

        after = await as_now(table, board)
        assert "face-down" in after.text
        assert (after.text, after.buttons) == (before.text, before.buttons)


async def test_menu_and_leaderboard_buttons_of_one_chat_do_nothing_in_another(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        menu = await settings_menu(table, "Ann")
        await table.command("Ann", "leaderboard")
        leaderboard = await table.wait_for_text("Leaderboard")
        ann = table.players["Ann"]
        chat = await table.client.create_chat(
            "group", title="Elsewhere", members=[ann], admins=[ann]
        )
        elsewhere = Table(table.running, table.database_url, int(chat["id"]), {"Ann": ann})
        other_menu = await settings_menu(elsewhere, "Ann")
        before = await as_now(elsewhere, other_menu)

        # Ann sends her first chat's buttons for the other chat's menu.
        assert await forged_press(elsewhere, "Ann", other_menu, first_data(menu)) == NOT_VALID
        assert (
            await forged_press(elsewhere, "Ann", other_menu, first_data(leaderboard)) == NOT_VALID
        )

        after = await as_now(elsewhere, other_menu)
        assert (after.text, after.buttons) == (before.text, before.buttons)
        # The menu's own buttons work where they were sent.
        assert await forged_press(elsewhere, "Ann", other_menu, first_data(other_menu)) == ""
        assert (await as_now(elsewhere, other_menu)).text.startswith("Tie window: now")


async def test_an_erasure_button_pressed_on_a_board_leaves_it_a_board(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    # The question's own data, sent for a board by the person who asked: the board
    # must not turn into "your data is erased".
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        asked = await table.command("Bob", "forgetme")
        question = await table.reply_to(asked)
        board = (await table.open_and_start(["Ann", "Bob"])).message
        before = await as_now(table, board)

        assert await forged_press(table, "Bob", board, first_data(question)) == NOT_VALID

        after = await as_now(table, board)
        assert (after.text, after.buttons) == (before.text, before.buttons)
        assert "Bob" in after.text, "nothing was erased"
