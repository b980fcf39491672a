"""The lobby by commands, and the powers of the game's creator and of chat admins."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with


def not_manager(runner: str) -> str:
    """The refusal of a manager's action, naming who runs the game."""
    return f"Only {runner}, who runs this game, or a chat admin can do that."


NOT_ASKED = "I could not ask Telegram whether you are an admin; try again in a moment."


async def test_lobby_by_commands_and_a_kick_by_reply(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    names = ["Ann", "Bob", "Cid", "Dan"]
    async with table_with(emulator, database_file(tmp_path), names) as table:
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        joined = {name: await table.command(name, "join") for name in ("Bob", "Cid", "Dan")}
        await table.wait_for_text("Players (4/12)")
        await table.command("Dan", "leave")
        await table.wait_for_text("Players (3/12)")

        refused = await table.command("Cid", "kick", reply_to=joined["Bob"])
        assert (await table.reply_to(refused)).text == not_manager("Ann")
        no_target = await table.command("Ann", "kick")
        assert "Reply with /kick to a message" in (await table.reply_to(no_target)).text
        gone = await table.command("Ann", "kick", reply_to=joined["Dan"])
        assert (await table.reply_to(gone)).text == "That player is not in this game."

        await table.command("Ann", "kick", reply_to=joined["Bob"])
        shown = await table.wait_for_text("Players (2/12)")
        assert shown.message_id == lobby.message_id, "the lobby message is edited"
        assert "Bob" not in shown.text
        assert "Ann" in shown.text
        assert "Cid" in shown.text

        await table.command("Ann", "startgame")
        board = await table.next_board()
        assert set(board.tops) == {"Ann", "Cid"}


async def test_a_lobby_its_creator_left_is_started_by_who_joined_first_after_them(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        await table.command("Ann", "newgame")
        for name in ("Bob", "Cid"):
            await table.command(name, "join")
        await table.command("Ann", "leave")
        await table.wait_for_text("Players (2/12)")
        refused = await table.command("Cid", "startgame")
        assert (await table.reply_to(refused)).text == not_manager("Bob")
        await table.command("Bob", "startgame")
        board = await table.next_board()
        assert set(board.tops) == {"Bob", "Cid"}
        checked = await table.client.calls("getChatMember")
        assert len(checked) == 1, "Cid was looked up; Bob, its creator now, was not"


async def test_a_chat_admin_removes_a_player_and_ends_the_game(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    names = ["Ann", "Bob", "Cid", "Zed"]
    async with table_with(emulator, database_file(tmp_path), names, admins=["Zed"]) as table:
        await table.open_and_start(["Ann", "Bob", "Cid"])
        assert await table.client.calls("getChatMember") == [], "the creator is not looked up"
        refused = await table.command("Bob", "endgame")
        assert (await table.reply_to(refused)).text == not_manager("Ann")
        assert len(await table.client.calls("getChatMember")) == 1, "looked up once"

        hello = await table.say("Cid", "brb, dinner")
        await table.command("Zed", "kick", reply_to=hello)
        board = await table.next_board()
        assert "Cid was removed; their cards are shared out." in board.message.text
        assert "Cid" not in board.tops
        assert "Cid: left" in board.message.text.splitlines()

        await table.command("Zed", "endgame")
        final = await table.next_board()
        assert "🛑 Game #1 was stopped: nobody wins." in final.message.text.splitlines()
        assert final.message.buttons == [], "an ended game has no buttons left"
        assert len(await table.client.calls("getChatMember")) == 3, "once per action"


async def test_stats_sent_as_a_reply_show_the_replied_to_player(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        bobs = await table.say("Bob", "hi all")
        asked = await table.command("Ann", "stats", reply_to=bobs)
        answer = await table.reply_to(asked)
        assert "Stats of" in answer.text
        assert "Bob" in answer.text
        assert "Ann" not in answer.text
        own = await table.command("Ann", "stats")
        answer = await table.reply_to(own)
        assert "Ann" in answer.text
        assert "Bob" not in answer.text


async def test_a_lobby_called_off_closes_its_message(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        await table.command("Bob", "join")
        await table.wait_for_text("Players (2/12)")
        await table.command("Ann", "endgame")
        await table.wait_for_text("The game was called off.")
        await table.client.wait_until_idle()
        closed = next(m for m in await table.messages() if m.message_id == lobby.message_id)
        assert closed.text == "This game was called off."
        assert closed.reply_markup is None, "nobody can join a called-off game"


async def test_a_second_newgame_hints_at_join_only_while_joining_is_open(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        await table.command("Ann", "newgame")
        await table.wait_for_text("A game of Snap is starting")
        in_lobby = await table.command("Cid", "newgame")
        assert (await table.reply_to(in_lobby)).text == (
            "A game is already open here. Send /join to take part."
        )
        again = await table.command("Ann", "newgame")  # she opened it
        assert (await table.reply_to(again)).text == (
            "You opened a game here already: send /startgame when everyone is in."
        )
        await table.command("Cid", "join")
        await table.wait_for_text("Players (2/12)")
        joined = await table.command("Cid", "newgame")
        assert (await table.reply_to(joined)).text == (
            "A game is already open here, and you are in it: its creator or an admin sends "
            "/startgame."
        )
        await table.command("Cid", "leave")
        await table.wait_for_text("Players (1/12)")
        await table.command("Bob", "join")
        await table.wait_for_text("Players (2/12)")
        await table.command("Ann", "startgame")
        await table.next_board()
        while_playing = await table.command("Cid", "newgame")
        answer = (await table.reply_to(while_playing)).text
        assert answer == "A game is already being played here; wait for it to end."
        refused_join = await table.command("Cid", "join")
        assert "/join" not in answer
        assert (await table.reply_to(refused_join)).text == (
            "The game has already started; wait for the next one."
        )


async def test_endgame_right_after_a_wrong_call_ends_the_game_in_the_chat(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        board = await table.open_and_start(["Ann", "Bob", "Cid"])
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        board = await table.next_board()
        assert not board.has_match
        caller = next(name for name in ("Bob", "Cid") if name != board.turn)
        assert (
            "No two face-up cards match" in (await table.press(caller, board.message, "Snap!")).text
        )
        await table.command("Ann", "endgame")  # the creator; the board's version is unchanged
        ended = await table.wait_for_text("🛑 Game #1 was stopped: nobody wins.")
        await table.client.wait_until_idle()
        texts = [m.text for m in await table.messages()]
        assert (
            sum(f"{caller} called Snap!, but no two face-up cards match." in text for text in texts)
            == 1
        )
        assert [m.message_id for m in await table.messages() if m.buttons] == []
        assert ended.message_id == max(m.message_id for m in await table.messages())


async def test_an_admin_whom_telegram_cannot_vouch_for_is_asked_to_try_again(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    names = ["Ann", "Bob", "Zed"]
    async with table_with(emulator, database_file(tmp_path), names, admins=["Zed"]) as table:
        await table.open_and_start(["Ann", "Bob"])
        await table.client.inject_fault("getChatMember", "server_error", count=2)
        refused = await table.command("Zed", "endgame")
        assert (await table.reply_to(refused)).text == NOT_ASKED
        unsaved = await table.command("Zed", "settings", "tie_window 150")
        assert (await table.reply_to(unsaved)).text == NOT_ASKED
        await table.client.wait_until_idle()
        assert not [m for m in await table.messages() if "stopped" in m.text], "nothing changed"

        again = await table.command("Zed", "endgame")
        final = await table.next_board()
        assert final.message.message_id > again
        assert "🛑 Game #1 was stopped: nobody wins." in final.message.text.splitlines()


async def test_a_lobby_its_last_player_is_kicked_from_is_called_off(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """As when the last one leaves: an empty lobby nobody runs would hold the topic for an hour."""
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        hello = await table.say("Ann", "hello")
        await table.command("Ann", "kick", reply_to=hello)
        await table.client.wait_until_idle()
        closed = next(m for m in await table.messages() if m.message_id == lobby.message_id)
        assert closed.text == "This game was called off."
        assert closed.reply_markup is None
        again = await table.command("Bob", "newgame")
        await table.wait_for_text("A game of Snap is starting")
        assert not [m for m in await table.messages() if m.reply_to_message_id == again]


async def test_a_player_asking_to_join_or_start_the_running_game_is_told_they_play_in_it(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        await table.open_and_start(["Ann", "Bob"])
        for player, command in (("Bob", "join"), ("Ann", "startgame")):
            asked = await table.command(player, command)
            assert (await table.reply_to(asked)).text == (
                "The game has started, and you are playing in it."
            )
        outside = await table.command("Cid", "join")
        assert (await table.reply_to(outside)).text == (
            "The game has already started; wait for the next one."
        )
