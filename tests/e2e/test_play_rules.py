"""Presses that must be refused or penalised, through the emulator."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, read_board, table_with


async def test_a_wrong_call_costs_the_caller_a_card(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        board = await table.open_and_start(["Ann", "Bob", "Cid"])
        assert board.turn is not None
        flipper = board.turn
        await table.press(flipper, board.message, "Flip")
        board = await table.next_board()
        assert not board.has_match
        caller = next(name for name in ("Ann", "Bob", "Cid") if name != flipper)
        toast = await table.press(caller, board.message, "Snap!")
        assert "No two face-up cards match" in toast.text
        after = await table.next_board()
        assert f"{caller} called Snap!, but no two face-up cards match." in after.message.text
        assert f"{caller} gives a card to {flipper}." in after.message.text
        before_counts = _face_down(board.message.text)
        after_counts = _face_down(after.message.text)
        assert after_counts[caller] == before_counts[caller] - 1
        assert after_counts[flipper] == before_counts[flipper] + 1


def _face_down(text: str) -> dict[str, int]:
    counts = {}
    for line in text.splitlines():
        if "face-down" in line:
            name = line.removeprefix("▶ ").split(":")[0]
            counts[name] = int(line.split(" face-down")[0].split("· ")[-1])
    return counts


async def test_stale_foreign_and_forged_presses_change_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid", "Eve"]) as table:
        first = await table.open_and_start(["Ann", "Bob", "Cid"])
        assert first.turn is not None
        await table.press(first.turn, first.message, "Flip")
        second = await table.next_board()
        assert second.turn is not None

        # The old board has lost its buttons: a press made on it just before is on its way.
        old_flip = next(
            b["callback_data"] for row in first.message.buttons for b in row if b["text"] == "Flip"
        )
        query = await table.client.press(
            table.chat_id,
            first.message.message_id,
            table.players[second.turn],
            data=old_flip,
            forged=True,
        )
        stale = await table.client.wait_for_toast(callback_query_id=query)
        assert stale.text == "This is an old message: use the newest one."
        outsider = await table.press("Eve", second.message, "Flip")
        assert outsider.text == "You are not playing in this game."
        not_turn = next(n for n in ("Ann", "Bob", "Cid") if n != second.turn)
        wrong_turn = await table.press(not_turn, second.message, "Flip")
        assert wrong_turn.text == "It is not your turn to flip."
        snap_data = next(
            b["callback_data"]
            for row in second.message.buttons
            for b in row
            if b["text"] == "Snap!"
        )
        game, version = snap_data.split(":")[1:3]
        for forged_data in (
            f"s:{game}:{int(version) + 5}:{snap_data.split(':')[3]}",
            "x" * 64,
            f"f:{game}:{version}:AAAAAAAAAAA",
        ):
            query = await table.client.press(
                table.chat_id,
                second.message.message_id,
                table.players["Ann"],
                data=forged_data,
                forged=True,
            )
            toast = await table.client.wait_for_toast(callback_query_id=query)
            assert toast.text == "This button is not valid."
        await table.client.wait_until_idle()
        boards = [m for m in await table.messages() if "face-down" in m.text]
        assert boards[-1].message_id == second.message.message_id


async def test_a_redelivered_press_is_applied_once(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        flipped = await table.next_board()
        press_update = (await table.client.updates())[-1]
        assert press_update.kind == "callback_query"
        await table.client.redeliver(press_update.update_id)
        await table.client.wait_for(
            lambda: _delivered_twice(table, press_update.update_id), what="the redelivery"
        )
        await table.client.wait_until_idle()
        boards = [read_board(m) for m in await table.messages() if "face-down" in m.text]
        assert boards[-1].message.message_id == flipped.message.message_id
        assert "flip 2" not in boards[-1].message.text


async def _delivered_twice(table: Table, update_id: int) -> bool:
    copies = [u for u in await table.client.updates() if u.update_id == update_id]
    return sum(len(u.deliveries) for u in copies) >= 2


async def test_twelve_players_fit_and_a_thirteenth_is_refused(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    names = [f"P{index}" for index in range(1, 14)]
    async with table_with(emulator, database_file(tmp_path), names) as table:
        await table.command("P1", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        for name in names[1:12]:
            assert (await table.press(name, lobby, "Join")).text == "You joined the game."
        refused = await table.press("P13", lobby, "Join")
        assert refused.text == "The game is full (12 players)."
        await table.press("P1", lobby, "Start")
        board = await table.next_board()
        assert len(board.tops) == 12
        assert sum(_face_down(board.message.text).values()) == 52


async def test_names_are_escaped(emulator: RunningEmulator, tmp_path: Path) -> None:
    async with table_with(emulator, database_file(tmp_path), ["<b>&", "Bob"]) as table:
        board = await table.open_and_start(["<b>&", "Bob"])
        assert "<b>&" in board.tops
        lobby = (await table.messages())[0]
        assert "<b>&" in lobby.text
        assert lobby.parse_mode == "HTML"


async def test_private_chat_unknown_commands_and_junk_arguments_get_answers(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await table.command("Ann", "frobnicate")
        await table.wait_for_text("I don't know /frobnicate")
        await table.command("Ann", "flip", "now please")
        await table.wait_for_text("/flip takes no arguments.")
        await table.command("Ann", "flip")
        await table.wait_for_text("There is no game here. Send /newgame to open one.")
        client = table.client
        private = await client.create_chat("private", members=[table.players["Ann"]])
        await client.send_command(int(private["id"]), table.players["Ann"], "newgame")
        answer = await client.wait_for_message(int(private["id"]), lambda m: bool(m.text))
        assert "Snap is played in groups" in answer.text


async def test_a_typed_call_repeated_on_the_same_board_is_told_it_counts_once(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        saved = await table.reply_to(await table.command("Ann", "settings", "penalty off"))
        assert saved.text.startswith("Saved."), saved.text
        board = await table.open_and_start(["Ann", "Bob"])
        assert not board.has_match
        await table.command("Bob", "snap")
        await table.client.wait_until_idle()
        again = await table.reply_to(await table.command("Bob", "snap"))
        assert again.text == "You pressed that already: it counts once."


async def test_a_long_typed_setting_or_game_number_is_not_echoed_at_length(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        setting = await table.reply_to(await table.command("Ann", "settings", "Z" * 4084 + " 5"))
        assert setting.text == f"There is no setting called {'Z' * 32}…."
        replay = await table.reply_to(await table.command("Bob", "replay", "9" * 4088))
        assert replay.text == f"No game #{'9' * 32}… has ended in this chat."
        assert await table.client.violations() == []
