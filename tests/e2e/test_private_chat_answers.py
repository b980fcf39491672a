"""A private chat with the bot, as its person reads it: no game there, only a language to set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with

PLAYED_IN_GROUPS = "Snap is played in groups: add me to a group and send /newgame there."
ONLY_THE_LANGUAGE = (
    "In a private chat only the language can be set (for example /settings language es): "
    "a game's settings are set in its group."
)
GAME_COMMANDS = [
    ("newgame", ""),
    ("join", ""),
    ("leave", ""),
    ("startgame", ""),
    ("flip", ""),
    ("flip", "now please"),
    ("snap", ""),
    ("snappot", ""),
    ("endgame", ""),
    ("kick", ""),
    ("extend", ""),
    ("extend", "15"),
    ("extend", "soon"),
]


@dataclass
class PrivateChat:
    """A person's private chat with the bot."""

    client: EmulatorClient
    user_id: int

    async def send(self, command: str, args: str = "") -> TranscriptMessage:
        """Send ``/command args``; the bot's first message after it."""
        sent = await self.client.send_command(self.user_id, self.user_id, command, args)
        return await self.client.wait_for_message(
            self.user_id, lambda m: m.is_from_bot and m.message_id > sent
        )

    async def now(self, message: TranscriptMessage) -> TranscriptMessage:
        """``message`` as the chat shows it once the bot is idle (edited since, maybe)."""
        await self.client.wait_until_idle()
        shown = await self.client.transcript(self.user_id)
        return next(m for m in shown if m.message_id == message.message_id)

    async def press(self, message: TranscriptMessage, button: str) -> str:
        """Press a button of ``message``; its toast."""
        query_id = await self.client.press(
            self.user_id, message.message_id, self.user_id, button_text=button
        )
        return (await self.client.wait_for_toast(callback_query_id=query_id)).text


async def private_chat(client: EmulatorClient, user_id: int) -> PrivateChat:
    await client.create_chat("private", members=[user_id])
    return PrivateChat(client, user_id)


@pytest.mark.parametrize(("command", "args"), GAME_COMMANDS)
async def test_every_game_command_in_a_private_chat_says_snap_is_played_in_groups(
    emulator: RunningEmulator, tmp_path: Path, command: str, args: str
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        chat = await private_chat(table.client, table.players["Ann"])
        answer = await chat.send(command, args)
    assert answer.text == PLAYED_IN_GROUPS


@pytest.mark.parametrize("command", ["help", "start"])
async def test_help_in_a_private_chat_lists_what_it_answers_after_where_snap_is_played(
    emulator: RunningEmulator, tmp_path: Path, command: str
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        chat = await private_chat(table.client, table.players["Ann"])
        shown = (await chat.send(command)).text
        await table.command("Ann", "help")
        in_the_group = (await table.wait_for_text("/newgame")).text
    assert shown.splitlines()[0] == PLAYED_IN_GROUPS
    assert "/stats: your figures in every chat" in shown, "what it answers here follows"
    assert "/newgame: open a game here" not in shown, "a game command is not offered here"
    assert "/newgame, /join" in shown.split("In a group")[1], "but named as a group's"
    assert PLAYED_IN_GROUPS not in in_the_group
    assert "/newgame: open a game here" in in_the_group


async def test_a_private_chat_shows_and_sets_only_its_language(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        chat = await private_chat(table.client, table.players["Ann"])
        menu = await chat.send("settings")
        assert menu.text.splitlines()[:2] == [
            "Settings of our private chat: the language I write to you in, here and in "
            "your /notify messages",
            "• Language: automatic (your Telegram app's) (language: en, mk, sw, es, ar, th)",
        ]
        assert "the next game plays by these" not in menu.text
        assert menu.button_texts == ["Language: automatic (your Telegram app's)"]

        assert (await chat.send("settings", "penalty off")).text == ONLY_THE_LANGUAGE
        assert (await chat.send("settings", "tie_window 150")).text == ONLY_THE_LANGUAGE
        assert (await chat.send("settings", "penalty")).text == (
            "Write /settings language CODE, for example /settings language es."
        )
        saved = await chat.send("settings", "language es")
        assert saved.text.startswith("Guardado.\n\n"), saved.text
        assert "• Idioma: Español" in saved.text
        assert "Penaliz" not in saved.text, "no game setting is shown"

        await chat.press(menu, "Language: automatic (your Telegram app's)")
        choices = await chat.now(menu)
        assert "✓ Español" in choices.button_texts
        assert "admin" not in choices.text, choices.text
        await chat.press(choices, "English")
        overview = await chat.now(menu)
        assert overview.button_texts == ["Language: English"]
        assert (await table.client.calls("getChatMember")) == [], "the chat is its person's own"


async def test_a_settings_menu_stays_in_the_chats_language_whoever_presses(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        await table.reply_to(await table.command("Ann", "settings", "language es"))
        asked = await table.command("Ann", "settings")
        menu = await table.client.wait_for_message(
            table.chat_id, lambda m: m.is_from_bot and m.message_id > asked and bool(m.button_texts)
        )
        opened = next(text for text in menu.button_texts if text.startswith("Margen de empate"))
        await table.press("Ann", menu, opened)  # Ann's app is English; the chat is Spanish
        await table.client.wait_until_idle()
        choices = next(m for m in await table.messages() if m.message_id == menu.message_id)
        assert choices.text.startswith("Margen de empate: ahora"), choices.text
        assert "« Atrás" in choices.button_texts


async def test_forgetme_forgets_the_private_chats_language_at_once(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        chat = await private_chat(table.client, table.players["Ann"])
        await chat.send("settings", "language es")
        question = await chat.send("forgetme")
        await chat.press(question, question.button_texts[0])
        await table.client.wait_until_idle()
        assert (await chat.send("help")).text.startswith(PLAYED_IN_GROUPS), "English again"


async def test_a_private_chat_without_a_chosen_language_follows_the_app(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        ann = table.players["Ann"]
        await table.command("Ann", "newgame")  # the bot stores her, with her app's language
        await table.wait_for_text("A game of Snap is starting")
        chat = await private_chat(table.client, ann)
        assert (await chat.send("help")).text.startswith(PLAYED_IN_GROUPS)
        await table.client._request("PATCH", f"/users/{ann}", json={"language_code": "es"})
        spanish = (await chat.send("help")).text
        assert spanish.startswith("Snap se juega en grupos"), spanish
