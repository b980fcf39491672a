"""/forgetme leaves no trace of the person: in other people's messages, in a running game
they left, in the ratings players are shown, and in their private chat with the bot."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator
from telesnap.services.stats.service import StatsService
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models import Chat, ChatSettings
from telesnap.storage.uow import UnitsOfWork

from .harness import Table, database_file, table_with
from .name_cells import cells_holding
from .stats_helpers import play_short_game, short_games_played
from .test_notify import start_privately


async def forget(table: Table, who: str) -> TranscriptMessage:
    """``who`` sends /forgetme and presses its button; the answer."""
    question = await table.reply_to(await table.command(who, "forgetme"))
    await table.press(who, question, "Erase my data")
    return await table.wait_for_text("Your data is erased:")


async def test_forgetme_renames_the_person_in_messages_of_games_and_chats_not_theirs(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """A /notify message to someone else, a game an admin stopped, a lobby joined and left."""
    url = database_file(tmp_path)
    names = ["Annabel", "Bob", "Cleopatra", "Zedekiah"]
    async with table_with(emulator, url, names, admins=["Zedekiah"]) as table:
        await start_privately(table, "Bob")
        await table.reply_to(await table.command("Bob", "notify"))
        await table.command("Annabel", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        told = await table.client.wait_for_message(
            table.players["Bob"], lambda m: "Annabel opened a game of Snap in" in m.text
        )
        assert told.is_from_bot
        await table.press("Cleopatra", lobby, "Join")
        await table.client.wait_for_message(table.chat_id, lambda m: "Cleopatra" in m.text)
        await table.press("Cleopatra", lobby, "Leave")
        await table.press("Bob", lobby, "Join")
        await table.press("Annabel", lobby, "Start")
        await table.next_board()
        await table.command("Zedekiah", "endgame")
        await table.wait_for_text("🛑 Zedekiah stopped the game with /endgame.")
        for person in ("Annabel", "Cleopatra", "Zedekiah"):
            await forget(table, person)
        await table.client.wait_until_idle()
    erased = ("Annabel", "Cleopatra", "Zedekiah")
    kept = {person: dict(await cells_holding(url, person)) for person in erased}
    assert kept == {person: {} for person in erased}, "no cell holds their names"


async def test_a_player_who_left_a_running_game_is_a_former_player_on_its_later_boards(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Annabel", "Bob", "Cid"], admins=["Bob"]) as table:
        await table.command("Bob", "settings", "flip_limit 12")
        await table.wait_for_text("Saved.")
        board = await table.open_and_start(["Bob", "Annabel", "Cid"])
        await table.command("Annabel", "leave")
        board = await table.next_board()
        assert "Annabel" in board.message.text, "the board says she left"
        await forget(table, "Annabel")
        while board.turn is not None:
            if board.has_match:
                await table.press("Bob", board.message, "Snap!")
            else:
                await table.press(board.turn, board.message, "Flip")
            board = await table.next_board()
            assert "Annabel" not in board.message.text
            assert "a former player" in board.message.text
        await table.client.wait_until_idle()
    assert await cells_holding(url, "Annabel") == {}, "no row written since names her"


async def test_ratings_shown_before_an_erasure_are_not_plotted_after_it(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Annabel", "Bob"], admins=["Annabel"]) as table:
        await short_games_played(table, ["Annabel", "Bob"], snapper="Bob", games=2)
        await forget(table, "Annabel")
        for _ in range(2):
            await play_short_game(table, ["Annabel", "Bob"], snapper="Bob")
        await table.client.wait_until_idle()
        chat_id, annabel = table.chat_id, table.players["Annabel"]
    engine = create_engine(url)
    try:
        stats = StatsService(UnitsOfWork(session_factory(engine)))
        view = await stats.player(chat_id, annabel, "Annabel")
        export = await stats.export_chat(chat_id)
    finally:
        await engine.dispose()
    assert view.chat is not None
    assert view.chat.rated_games == 2
    assert len(view.chat_ratings) == 2, "the chart plots the games since the erasure"
    assert view.chat_rating_games[0] == 1, "its axis starts at her first rated game"
    shown = [
        player["shown_rating_after"]
        for game in export["games"]
        for player in game["players"]
        if player["user_id"] == annabel
    ]
    assert shown[:2] == [None, None], "the export keeps no rating shown before the erasure"
    assert None not in shown[2:], "nor loses one shown since"


async def test_forgetme_in_a_private_chat_erases_its_language_and_the_chat(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Carla"]) as table:
        client, carla = table.client, table.players["Carla"]
        await client.create_chat("private", members=[carla])
        sent = await client.send_command(carla, carla, "settings", "language es")
        await client.wait_for_message(carla, lambda m: m.is_from_bot and m.message_id > sent)
        assert await private_rows(url, carla) == (1, 1), "her chat and its language are kept"
        await client.send_command(carla, carla, "forgetme")
        question = await client.wait_for_message(carla, lambda m: bool(m.buttons))
        await client.press(carla, question.message_id, carla, button_text="Borrar mis datos")
        await client.wait_for_message(carla, lambda m: "Tus datos están borrados:" in m.text)
        await client.wait_until_idle()
    assert await private_rows(url, carla) == (0, 0)


async def private_rows(url: str, user_id: int) -> tuple[int, int]:
    """How many ``chats`` rows and ``chat_settings`` rows the person's private chat has."""
    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            chats = (await session.scalars(select(Chat.id).where(Chat.id == user_id))).all()
            settings = (
                await session.scalars(
                    select(ChatSettings.chat_id).where(ChatSettings.chat_id == user_id)
                )
            ).all()
    finally:
        await engine.dispose()
    return len(chats), len(settings)
