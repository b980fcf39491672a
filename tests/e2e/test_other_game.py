"""Presses on a game that is not (or no longer) the chat's game: each one is answered."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import PLAYER_LINE, Board, database_file, table_with

OTHER_GAME = "This button belongs to a game that is not being played here."
GAME_OVER = "This game is over."


def callback_data(board: Board, action: str) -> str:
    """The callback data of the board's button for ``action`` (``f`` Flip, ``s`` Snap!)."""
    return next(
        button["callback_data"]
        for row in board.message.buttons
        for button in row
        if button.get("callback_data", "").startswith(f"{action}:")
    )


def cards_held(board: Board, name: str) -> int:
    for line in board.message.text.splitlines():
        if (player := PLAYER_LINE.match(line)) and player["name"] == name:
            return int(player["down"]) + int(player["up"])
    raise AssertionError(f"{name} is not on the board")


async def test_the_second_snap_of_the_race_that_ends_the_game_is_answered(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Bob gives his cards away with wrong calls; Ann then snaps up his last ones."""
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        late_toast = None
        called: set[str] = set()
        for _ in range(600):
            if board.turn is None:
                break
            if board.has_match:
                won = await table.press("Ann", board.message, "Snap!")
                assert won.text == "⚡ You won the race!"
                # Bob presses on the board as his phone showed it (the bot takes the
                # buttons off the boards of a game that has ended).
                late = await table.client.press(
                    table.chat_id,
                    board.message.message_id,
                    table.players["Bob"],
                    data=callback_data(board, "s"),
                    forged=True,
                )
                late_toast = (await table.client.wait_for_toast(callback_query_id=late)).text
                assert late_toast, "every press is answered"
            elif cards_held(board, "Bob") > 1 and callback_data(board, "s") not in called:
                called.add(callback_data(board, "s"))  # a button counts once per board
                wrong = await table.press("Bob", board.message, "Snap!")
                assert "No two face-up cards match" in wrong.text
            else:
                assert (await table.press(board.turn, board.message, "Flip")).text == ""
            board = await table.next_board()
        assert "Ann wins" in board.message.text
        assert late_toast == GAME_OVER


async def test_a_flip_on_the_last_board_after_endgame_is_answered(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        await table.command("Ann", "endgame")
        assert "was stopped: nobody wins." in (await table.next_board()).message.text
        assert board.turn is not None
        # Pressed on the board as the player's phone still showed it (the bot then
        # takes the buttons off the old boards).
        query_id = await table.client.press(
            table.chat_id,
            board.message.message_id,
            table.players[board.turn],
            data=callback_data(board, "f"),
            forged=True,
        )
        toast = await table.client.wait_for_toast(callback_query_id=query_id)
        assert toast.text == GAME_OVER


async def test_a_signed_button_of_another_chats_game_is_answered(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        client = table.client
        other = int(
            (await client.create_chat("group", title="Elsewhere", members=[table.players["Ann"]]))[
                "id"
            ]
        )
        await client.send_command(other, table.players["Ann"], "help")
        help_message = await client.wait_for_message(other, lambda m: "/newgame" in m.text)
        flip_data = callback_data(board, "f")
        query_id = await client.press(
            other, help_message.message_id, table.players["Ann"], data=flip_data, forged=True
        )
        toast = await client.wait_for_toast(callback_query_id=query_id)
        assert toast.text == OTHER_GAME
