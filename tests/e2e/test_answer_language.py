"""Who hears which language: a chat's answers in the chat's, a toast in the presser's."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with
from .test_settings import as_now, settings_menu


async def test_a_refusal_in_a_spanish_chat_is_in_spanish_whoever_asks(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ana", "Bob"], languages={"Ana": "es"}
    ) as table:
        await table.command("Ana", "newgame")  # the chat takes its opener's language
        await table.wait_for_text("Snap")
        await table.command("Ana", "endgame")
        await table.client.wait_until_idle()
        refused = await table.reply_to(await table.command("Bob", "join"))
        assert refused.text == "Aquí no hay ninguna partida. Envía /newgame para abrir una."
        unknown = await table.reply_to(await table.command("Bob", "dance"))
        assert unknown.text.startswith("No conozco /dance")


async def test_a_chat_with_no_language_yet_answers_its_sender_in_theirs(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ana", "Bob"], languages={"Ana": "es"}
    ) as table:
        refused = await table.reply_to(await table.command("Ana", "join"))
        assert refused.text == "Aquí no hay ninguna partida. Envía /newgame para abrir una."


async def test_the_settings_menus_saved_toast_is_in_the_pressers_language(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator,
        database_file(tmp_path),
        ["Ann", "Bea"],
        admins=["Ann", "Bea"],
        languages={"Bea": "es"},
    ) as table:
        await table.command("Ann", "settings", "language en")
        await table.wait_for_text("Saved.")
        menu = await settings_menu(table, "Ann")
        await table.press("Bea", menu, "Tie window: 100 ms")
        saved = await table.press("Bea", await as_now(table, menu), "200 ms")
        assert saved.text == "Guardado."
        assert "Tie window: 200 ms" in (await as_now(table, menu)).text  # the chat's: English


async def test_a_lobby_alert_is_in_the_language_of_someone_who_started_the_bot_first(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], languages={"Bob": "es"}
    ) as table:
        bob = table.players["Bob"]
        await table.client.create_chat("private", members=[bob])
        started = await table.client.send_command(bob, bob, "start")
        hello = await table.client.wait_for_message(
            bob, lambda m: m.is_from_bot and m.message_id > started
        )
        await table.reply_to(await table.command("Bob", "notify"))
        await table.command("Ann", "newgame")
        told = await table.client.wait_for_message(
            bob, lambda m: m.is_from_bot and m.message_id > hello.message_id
        )
        assert told.text.startswith("🃏 Ann abrió una partida de Snap en"), told.text


async def test_a_flip_in_an_open_lobby_says_the_game_has_not_started(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await table.command("Ann", "newgame")
        await table.wait_for_text("A game of Snap is starting")
        refused = await table.reply_to(await table.command("Bob", "flip"))
        assert refused.text == (
            "The game has not started yet: its creator or an admin sends /startgame."
        )
