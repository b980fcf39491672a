"""Who hears which language: a chat's answers in the chat's, a toast in the presser's."""

from __future__ import annotations

import re
from pathlib import Path

from telesnap.bot.render.i18n import LRI, PDI, RLM
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with
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


async def answer_after(table: Table, asked: int) -> TranscriptMessage:
    """The bot's newest message after ``asked``, once the bot is idle (an answer or an edit)."""
    await table.client.wait_until_idle()
    return [m for m in await table.messages() if m.is_from_bot and m.message_id > asked][-1]


async def test_settings_and_notify_answer_their_asker_in_theirs_while_the_chat_has_none(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Eva"], admins=["Eva"], languages={"Eva": "es"}
    ) as table:
        menu = await answer_after(table, await table.command("Eva", "settings"))
        assert menu.text.startswith("Ajustes (la próxima partida se juega con ellos)"), menu.text
        hint = await table.reply_to(await table.command("Eva", "settings", "tie_window"))
        assert hint.text == "Escribe /settings NOMBRE VALOR, por ejemplo /settings tie_window 150."

        await table.press("Eva", menu, "Margen de empate: 100 ms")
        choices = await as_now(table, menu)
        assert choices.text == "Margen de empate: ahora 100 ms. Elige (solo admins):"
        assert (await table.press("Eva", choices, "200 ms")).text == "Guardado."
        overview = await as_now(table, menu)
        assert overview.text.startswith("Ajustes"), overview.text
        assert "Margen de empate: 200 ms" in overview.button_texts

        subscribed = await table.reply_to(await table.command("Eva", "notify"))
        assert subscribed.text.startswith("🔔 Activado: te escribiré en privado"), subscribed.text
        usage = await table.reply_to(await table.command("Eva", "notify", "maybe"))
        assert usage.text.startswith("/notify: un mensaje privado"), usage.text


async def test_saved_by_command_is_said_in_the_askers_language_while_the_chat_has_none(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Eva"], admins=["Eva"], languages={"Eva": "es"}
    ) as table:
        saved = await table.reply_to(await table.command("Eva", "settings", "tie_window 150"))
        assert saved.text.startswith("Guardado."), saved.text


def right_to_left(text: str) -> bool:
    """Every line is marked right to left, and each command is a left-to-right isolate."""
    lines_marked = all(line.startswith(RLM) for line in text.split("\n") if line)
    commands = re.findall(r".?/[a-z]+", text)
    return lines_marked and bool(commands) and all(c.startswith(LRI) for c in commands)


async def test_an_arabic_askers_answers_run_right_to_left_while_the_chat_has_no_language(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator,
        database_file(tmp_path),
        ["Amal", "Ann"],
        admins=["Amal", "Ann"],
        languages={"Amal": "ar"},
    ) as table:
        menu = await answer_after(table, await table.command("Amal", "settings"))
        assert right_to_left(menu.text), menu.text
        assert f"{LRI}/settings tie_window 150{PDI}" in menu.text
        hint = await table.reply_to(await table.command("Amal", "settings", "tie_window"))
        assert right_to_left(hint.text), hint.text
        await table.press("Amal", menu, menu.button_texts[0])
        assert (await as_now(table, menu)).text.startswith(RLM)
        usage = await table.reply_to(await table.command("Amal", "notify", "maybe"))
        assert right_to_left(usage.text), usage.text

        english = await answer_after(table, await table.command("Ann", "settings"))
        assert RLM not in english.text
        assert LRI not in english.text


async def test_an_arabic_askers_help_runs_right_to_left_while_the_chat_has_no_language(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Amal"], languages={"Amal": "ar"}
    ) as table:
        help_text = await answer_after(table, await table.command("Amal", "help"))
        assert right_to_left(help_text.text), help_text.text
