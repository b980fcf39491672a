"""Answers that change nothing (/history, /stats, /help, a refusal) come out of budgets, so a
flood of questions costs a chat a handful of its messages, whoever asks."""

from __future__ import annotations

from pathlib import Path

from telesnap.bot.ingress.gate import GateLimits
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with

LIMITS = GateLimits()


async def answered(table: Table, asked: set[int]) -> int:
    await table.client.wait_until_idle()
    return sum(1 for m in await table.messages() if m.reply_to_message_id in asked)


async def test_one_member_asking_again_and_again_gets_a_handful_of_answers(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Mal"]) as table:
        asked = {
            await table.command("Mal", "history") for _ in range(LIMITS.replies_per_user.count)
        }
        assert await answered(table, asked) == len(asked), "questions in a row are each answered"
        flood = {await table.command("Mal", "history") for _ in range(8)}
        assert await answered(table, flood) == 0, "past her share, none"
        ann = await table.command("Ann", "history")
        assert await answered(table, {ann}) == 1, "the others are answered as before"


async def test_a_crowd_each_within_their_share_gets_the_chats_share(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    crowd = [f"Member {n}" for n in range(8)]
    async with table_with(emulator, database_file(tmp_path), crowd) as table:
        asked = {await table.command(name, "history") for name in crowd for _ in range(4)}
        assert await answered(table, asked) == LIMITS.replies_per_chat.count
