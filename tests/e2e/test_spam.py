"""One member floods a chat: its game goes on, the chat gets a handful of replies, every press
is answered, and another chat is served as before (the latencies are printed, not timed).

The bot runs in a process of its own (``telesnap run``, long polling), as it does in
production: the emulator and this test's client stay in the test's process, so what her
250 requests cost them is not paid on the bot's event loop. Two figures are printed for
the other chat's Flips: from the press to its answer (what a player waits), and from the
moment the emulator handed the press to the bot to its answer (the bot's own part).
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import telesnap
from telesnap.bot.ingress.gate import GateLimits
from telesnap.emulator.records import Toast
from telesnap.emulator.testing import RunningEmulator
from telesnap.emulator.users import Press
from tests.multiworker.processes import Process

from .harness import Table, database_file

COMMANDS = 150
PRESSES = 100
SPAM = ("snap", "join", "startgame", "frobnicate", "help", "leave", "snap@telesnap_test_bot")
TURNS = 6
SOURCE = str(Path(telesnap.__file__).resolve().parent.parent)
"""Where the bot's process imports telesnap from: the tree this test runs."""
START_S = 60.0
"""How long the bot's process may take to start (a failure guard)."""


@dataclass(frozen=True)
class Turn:
    """One Flip as its player saw it, on the emulator's clock."""

    toast: Toast
    answered_s: float
    """From the press to its answer."""
    board_s: float
    """From the press to the next board."""


async def play(table: Table, turns: int) -> list[Turn]:
    """Whoever's turn it is flips, ``turns`` times; each Flip is answered and its board comes."""
    played = []
    board = await table.latest_board()
    for _ in range(turns):
        assert board.turn is not None
        toast = await table.press(board.turn, board.message, "Flip")
        assert toast.answered_at is not None
        board = await table.next_board()
        played.append(
            Turn(
                toast,
                toast.answered_at - toast.pressed_at,
                board.message.sent_at - toast.pressed_at,
            )
        )
    return played


async def bots_part(running: RunningEmulator, turns: Sequence[Turn]) -> list[float]:
    """For each Flip, from its first hand-over to the bot to the bot's answer."""
    handed = {
        update.payload["callback_query"]["id"]: update.first_delivery.at
        for update in await running.client.updates()
        if update.kind == "callback_query" and update.first_delivery is not None
    }
    parts = []
    for turn in turns:
        assert turn.toast.answered_at is not None
        parts.append(turn.toast.answered_at - handed[turn.toast.callback_query_id])
    return parts


def median_ms(values: Sequence[float]) -> float:
    return statistics.median(values) * 1000


async def group(running: RunningEmulator, database_url: str, title: str, names: list[str]) -> Table:
    """A group chat with these players (the bot is not started here: it runs on its own)."""
    client = running.client
    players = {name: int((await client.create_user(name))["id"]) for name in names}
    chat = await client.create_chat("group", title=title, members=list(players.values()))
    return Table(running, database_url, int(chat["id"]), players)


@asynccontextmanager
async def bot_process(
    running: RunningEmulator, database_url: str, log: Path
) -> AsyncIterator[None]:
    """``telesnap run`` against the emulator, in a process of its own, until the block ends."""
    bot = Process(
        "bot",
        [sys.executable, "-m", "telesnap", "run"],
        log,
        environment={
            "TELESNAP_TOKEN": running.token,
            "TELESNAP_API_URL": running.url,
            "TELESNAP_DATABASE_URL": database_url,
            "TELESNAP_FLOOD_CONTROL": "off",
            "TELESNAP_SHUFFLE_SEED": "7",
            "TELESNAP_LOG_LEVEL": "WARNING",
            "PYTHONPATH": os.pathsep.join(filter(None, [SOURCE, os.environ.get("PYTHONPATH")])),
        },
        forked=True,
    )
    await bot.start()
    try:
        # The bot is up once it polls (its first getUpdates comes after getMe and the rest).
        await running.client.wait_for_call("getUpdates", timeout=START_S)
        yield
        assert await bot.terminate() == 0, bot.log_tail()
    finally:
        await bot.kill()
        bot.close()


async def test_one_members_flood_costs_a_handful_of_replies_and_stalls_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    table = await group(emulator, url, "Snap club", ["Ann", "Bob", "Mal"])
    other = await group(emulator, url, "Other club", ["Cat", "Dan"])
    async with bot_process(emulator, url, tmp_path / "bot.log"):
        await table.open_and_start(["Ann", "Bob"])
        await other.open_and_start(["Cat", "Dan"])
        # Both games are played at once, before the flood and during it.
        other_normal, own_normal = await asyncio.gather(play(other, TURNS), play(table, TURNS))
        before = {m.message_id for m in await table.messages()}
        board = await table.latest_board()
        client, mal = table.client, table.players["Mal"]

        async def commands() -> list[int]:
            sent = []
            for number in range(COMMANDS):
                command, _, target = SPAM[number % len(SPAM)].partition("@")
                name = f"{command}@{target}" if target else command
                sent.append(await client.send_command(table.chat_id, mal, name))
            return sent

        presses = [
            Press(table.chat_id, board.message.message_id, mal, button_text=text, offset=i * 0.05)
            for i, text in enumerate(["Snap!", "Flip"] * (PRESSES // 2))
        ]
        # Ann and Bob play on in the flooded chat, Cat and Dan in theirs: each of their
        # Flips is answered and its board comes (``play`` checks both).
        spam_ids, query_ids, other_during, own_during = await asyncio.gather(
            commands(), client.press_many(presses), play(other, TURNS), play(table, TURNS)
        )
        # Every press of hers is answered, most of them at once with a toast that says why.
        toasts = [await client.wait_for_toast(callback_query_id=q) for q in query_ids]
        assert all(toast.answered_at is not None for toast in toasts)
        slowed = [t for t in toasts if t.text and t.text.startswith("⏳ Too many")]
        assert slowed

        spam = set(spam_ids)
        messages = [m for m in await table.messages() if m.message_id not in before]
        replies = [m for m in messages if m.reply_to_message_id in spam]
        answered = [
            median_ms([t.answered_s for t in turns]) for turns in (other_normal, other_during)
        ]
        bot = [
            median_ms(await bots_part(emulator, turns)) for turns in (other_normal, other_during)
        ]
        paced = [median_ms([t.board_s for t in turns]) for turns in (own_normal, own_during)]
        print(
            f"\nspam: {COMMANDS} commands and {PRESSES} presses from one member; "
            f"{len(replies)} replies in the chat; {len(slowed)} presses turned away with a toast;"
            f"\nthe other chat's Flip answered in {answered[0]:.0f} ms (median) before and "
            f"{answered[1]:.0f} ms during the flood (ratio {answered[1] / answered[0]:.2f});"
            f"\nthe bot's part of it (handed over to answered) {bot[0]:.0f} ms before and "
            f"{bot[1]:.0f} ms during (ratio {bot[1] / bot[0]:.2f});"
            f"\nthe flooded game's board came {paced[0]:.0f} ms after its Flip before and "
            f"{paced[1]:.0f} ms during (ratio {paced[1] / paced[0]:.2f})"
        )
        # A member's replies are limited (10 in any 30 s): the flood spanned this many windows.
        limit = GateLimits().replies_per_user
        sent_spam = [
            m.sent_at
            for m in await client.transcript(table.chat_id, include_users=True)
            if m.message_id in spam
        ]
        windows = math.floor((max(sent_spam) - min(sent_spam)) / limit.seconds) + 1
        assert len(replies) <= limit.count * windows
