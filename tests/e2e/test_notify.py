"""/notify: a private message when a lobby opens in a chat where one plays."""

from __future__ import annotations

import signal
from pathlib import Path

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with
from .test_durable_notices import _unsent
from .test_resilience import bot_process

OPENED = "opened a game of Snap in"
OPENED_ES = "abrió una partida de Snap en"


async def start_privately(table: Table, player: str) -> None:
    """The player opens a private chat with the bot and presses Start (as its button does)."""
    user_id = table.players[player]
    await table.client.create_chat("private", members=[user_id])
    sent = await table.client.send_command(user_id, user_id, "start", "notify")
    await table.client.wait_for_message(user_id, lambda m: m.is_from_bot and m.message_id > sent)


async def private_messages(table: Table, player: str) -> list[TranscriptMessage]:
    user_id = table.players[player]
    await table.client.wait_until_idle()
    return [m for m in await table.client.transcript(user_id) if m.is_from_bot and OPENED in m.text]


async def open_lobby(table: Table, player: str) -> None:
    await table.command(player, "newgame")
    await table.wait_for_text("A game of Snap is starting")


async def close_lobby(table: Table, player: str) -> None:
    await table.command(player, "endgame")
    await table.wait_for_text("The game was called off.")


async def test_a_subscriber_hears_once_when_a_lobby_opens_but_not_of_their_own(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], forum_topic="Snap"
    ) as table:
        await start_privately(table, "Bob")
        asked = await table.command("Bob", "notify")
        answer = await table.reply_to(asked)
        assert "🔔 On: I will write to you privately when a game opens in Snap club." in answer.text
        assert answer.reply_markup is None, "Bob started the bot: no button to do it"

        await open_lobby(table, "Ann")
        (told,) = await private_messages(table, "Bob")
        assert "Ann opened a game of Snap in Snap club." in told.text
        links = [e["url"] for e in told.entities if e["type"] == "text_link"]
        assert len(links) == 1, told.entities
        assert links[0].startswith("https://t.me/c/")
        assert links[0].endswith(f"?thread={table.thread_id}")
        assert "Send /notify off in that chat to stop these messages." in told.text

        await close_lobby(table, "Ann")
        await open_lobby(table, "Bob")
        assert len(await private_messages(table, "Bob")) == 1, "not told of his own lobby"


async def test_a_subscriber_who_never_started_the_bot_is_shown_how_then_hears(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Cid"]) as table:
        asked = await table.command("Cid", "notify")
        answer = await table.reply_to(asked)
        assert "I cannot write to you yet" in answer.text
        assert answer.reply_markup is not None
        (button,) = answer.reply_markup["inline_keyboard"][0]
        username = (await table.client.bot())["user"]["username"]
        assert button["url"] == f"https://t.me/{username}?start=notify"

        await open_lobby(table, "Ann")
        await table.client.wait_until_idle()
        sent_to = [call.params.get("chat_id") for call in await table.client.calls("sendMessage")]
        assert table.players["Cid"] not in sent_to, "Telegram would refuse: Cid never started it"
        await close_lobby(table, "Ann")

        user_id = table.players["Cid"]
        await table.client.create_chat("private", members=[user_id])
        await table.client.send_command(user_id, user_id, "start", "notify")
        welcome = await table.client.wait_for_message(
            user_id,
            lambda m: m.is_from_bot and "I write to you here when a game opens in" in m.text,
        )
        assert "Snap club" in welcome.text

        await open_lobby(table, "Ann")
        (told,) = await private_messages(table, "Cid")
        assert "Ann opened a game of Snap in Snap club." in told.text
        assert "Open the chat to join it." in told.text, "a basic group has no links"


async def test_notify_off_stops_the_messages_and_says_so(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await start_privately(table, "Bob")
        await table.reply_to(await table.command("Bob", "notify"))
        off = await table.reply_to(await table.command("Bob", "notify", "off"))
        assert "🔕 Off: no more private messages when a game opens in Snap club." in off.text
        again = await table.reply_to(await table.command("Bob", "notify", "off"))
        assert "You were not on the list for Snap club" in again.text

        await open_lobby(table, "Ann")
        assert await private_messages(table, "Bob") == []


async def test_a_subscriber_who_blocks_the_bot_is_dropped_from_the_list(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await start_privately(table, "Bob")
        await table.reply_to(await table.command("Bob", "notify"))
        await table.client.kick_bot(table.players["Bob"])  # Bob blocks the bot
        await table.client.wait_until_idle()

        await open_lobby(table, "Ann")
        assert await private_messages(table, "Bob") == []
        again = await table.reply_to(await table.command("Bob", "notify"))
        assert "🔔 On:" in again.text, "he was taken off the list, so this puts him back"
        assert "I cannot write to you yet" in again.text


async def test_a_private_message_committed_before_a_kill_arrives_once_after_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Once, and in its reader's language (Bob's is Spanish), which the new process must look up."""
    client = emulator.client
    users = {
        "Ann": int((await client.create_user("Ann"))["id"]),
        "Bob": int((await client.create_user("Bob", language_code="es"))["id"]),
    }
    chat = await client.create_chat(
        "group", title="Crashy", members=list(users.values()), admins=[users["Ann"]]
    )
    table = Table(emulator, database_file(tmp_path), int(chat["id"]), users)
    log = tmp_path / "bot.log"
    bob = table.players["Bob"]
    await client.create_chat("private", members=[bob])
    async with bot_process(emulator, table.database_url, log) as process:
        await client.send_command(bob, bob, "start", "notify")
        await client.wait_for_message(bob, lambda m: m.is_from_bot, timeout=20)
        await table.reply_to(await table.command("Bob", "notify"), limit_s=20)
        # From now on Telegram takes no message: neither the lobby nor Bob's can get out.
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await table.command("Ann", "newgame")
        await client.wait_for(
            _unsent(table.database_url, "lobby", "notice"), what="the lobby and Bob's message"
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    assert await private_messages(table, "Bob") == []
    async with bot_process(emulator, table.database_url, log):
        await client.wait_for_message(bob, lambda m: OPENED_ES in m.text, timeout=20)
        await client.wait_for(_unsent(table.database_url), what="every row sent")
        await client.wait_until_idle()
        told = [m for m in await client.transcript(bob) if m.is_from_bot and "Snap" in m.text]
    assert [m.text.splitlines()[0] for m in told if "Crashy" in m.text] == [
        "🃏 Ann abrió una partida de Snap en Crashy."
    ]


async def test_the_private_chat_chooses_the_language_of_its_messages(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Bob's Telegram app says English; his private chat with the bot picks Spanish."""
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        await start_privately(table, "Bob")
        bob = table.players["Bob"]
        chosen = await table.client.send_command(bob, bob, "settings", "language es")
        answer = await table.client.wait_for_message(
            bob, lambda m: m.is_from_bot and m.message_id > chosen
        )
        assert answer.text.startswith("Guardado."), answer.text
        await table.reply_to(await table.command("Bob", "notify"))
        await open_lobby(table, "Ann")
        await table.client.wait_until_idle()
        (told,) = [
            m
            for m in await table.client.transcript(bob)
            if m.is_from_bot and (OPENED_ES in m.text or OPENED in m.text)
        ]
        assert told.text.startswith("🃏 Ann abrió una partida de Snap en Snap club."), told.text
