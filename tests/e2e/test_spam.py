"""One member floods a chat: its game goes on, the chat gets a handful of replies, every press
is answered, and another chat is served as before (the latencies are printed, not timed)."""

from __future__ import annotations

import asyncio
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from telesnap.emulator.testing import RunningEmulator
from telesnap.emulator.users import Press

from .harness import Table, another_chat, database_file, table_with

COMMANDS = 150
PRESSES = 100
SPAM = ("snap", "join", "startgame", "frobnicate", "help", "leave", "snap@telesnap_test_bot")
TURNS = 6


@dataclass(frozen=True)
class Turn:
    """One Flip as its player saw it, on the emulator's clock."""

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
            Turn(toast.answered_at - toast.pressed_at, board.message.sent_at - toast.pressed_at)
        )
    return played


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def test_one_members_flood_costs_a_handful_of_replies_and_stalls_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Mal"]) as table:
        other = await another_chat(table, ["Cat", "Dan"])
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
        slowed = [t for t in toasts if t.text and "Too many presses" in t.text]
        assert slowed

        spam = set(spam_ids)
        messages = [m for m in await table.messages() if m.message_id not in before]
        replies = [m for m in messages if m.reply_to_message_id in spam]
        latency_ratio = median_ms([t.answered_s for t in other_during]) / median_ms(
            [t.answered_s for t in other_normal]
        )
        pace_ratio = median_ms([t.board_s for t in own_during]) / median_ms(
            [t.board_s for t in own_normal]
        )
        print(
            f"\nspam: {COMMANDS} commands and {PRESSES} presses from one member; "
            f"{len(replies)} replies in the chat; {len(slowed)} presses turned away with a toast;"
            f"\nthe other chat's Flip answered in "
            f"{median_ms([t.answered_s for t in other_normal]):.0f} ms (median) before and "
            f"{median_ms([t.answered_s for t in other_during]):.0f} ms during the flood "
            f"(ratio {latency_ratio:.2f});"
            f"\nthe flooded game's board came "
            f"{median_ms([t.board_s for t in own_normal]):.0f} ms after its Flip before and "
            f"{median_ms([t.board_s for t in own_during]):.0f} ms during (ratio {pace_ratio:.2f})"
        )
        # A member's replies are limited to 5 in any 10 s: the flood spanned this many windows.
        sent_spam = [
            m.sent_at
            for m in await client.transcript(table.chat_id, include_users=True)
            if m.message_id in spam
        ]
        windows = math.floor((max(sent_spam) - min(sent_spam)) / 10) + 1
        assert len(replies) <= 5 * windows
