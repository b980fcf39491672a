"""One member floods a chat: the game goes on, the chat gets a handful of replies, every press
is answered, and another chat is served as before (its press latency is printed, not timed)."""

from __future__ import annotations

import asyncio
import math
import statistics
from pathlib import Path

from telesnap.emulator.testing import RunningEmulator
from telesnap.emulator.users import Press

from .harness import Table, another_chat, database_file, table_with

COMMANDS = 150
PRESSES = 100
SPAM = ("snap", "join", "startgame", "frobnicate", "help", "leave", "snap@telesnap_test_bot")


async def flip_latencies(table: Table, flips: int) -> list[float]:
    """Play ``flips`` turns; for each Flip, how long its answer took (the emulator's clock)."""
    latencies = []
    board = await table.latest_board()
    for _ in range(flips):
        assert board.turn is not None
        toast = await table.press(board.turn, board.message, "Flip")
        assert toast.answered_at is not None
        latencies.append(toast.answered_at - toast.pressed_at)
        board = await table.next_board()
    return latencies


async def test_one_members_flood_costs_a_handful_of_replies_and_stalls_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Mal"]) as table:
        other = await another_chat(table, ["Cat", "Dan"])
        board = await table.open_and_start(["Ann", "Bob"])
        await other.open_and_start(["Cat", "Dan"])
        normal = await flip_latencies(other, 6)
        before = {m.message_id for m in await table.messages()}
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
        spam_ids, query_ids, during = await asyncio.gather(
            commands(), client.press_many(presses), flip_latencies(other, 6)
        )
        # Every press is answered: over the budget with a toast of its own.
        toasts = [await client.wait_for_toast(callback_query_id=q) for q in query_ids]
        assert all(toast.answered_at is not None for toast in toasts)
        slowed = [t for t in toasts if t.text and "Too many presses" in t.text]

        # The game goes on: the player whose turn it is flips, and the next board comes.
        board = await table.latest_board()
        assert board.turn is not None
        toast = await table.press(board.turn, board.message, "Flip")
        assert toast.answered_at is not None
        await table.next_board()

        spam = set(spam_ids)
        messages = [m for m in await table.messages() if m.message_id not in before]
        replies = [m for m in messages if m.reply_to_message_id in spam]
        print(
            f"\nspam: {COMMANDS} commands and {PRESSES} presses from one member; "
            f"{len(replies)} replies in the chat; {len(slowed)} presses turned away with a toast; "
            f"the other chat's Flip answered in {statistics.median(normal) * 1000:.0f} ms "
            f"(median) before and {statistics.median(during) * 1000:.0f} ms during the flood"
        )
        # The gate answers a user 5 times in any 10 s: the flood spanned this many windows.
        sent_spam = [
            m.sent_at
            for m in await client.transcript(table.chat_id, include_users=True)
            if m.message_id in spam
        ]
        windows = math.floor((max(sent_spam) - min(sent_spam)) / 10) + 1
        assert len(replies) <= 5 * windows
        assert slowed
