"""Fast play under Telegram's flood limits: nothing lost, no 429."""

from __future__ import annotations

import re
from pathlib import Path

from telesnap.bot.outbox import FloodLimits as BotFloodLimits
from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.testing import running_emulator

from .harness import database_file, table_with

# Telegram's 20 messages a minute per group, scaled down to 4 every 2 seconds.
TELEGRAM = TelegramFloodLimits(group_per_minute=4, group_window_seconds=2.0)
BOT = BotFloodLimits(group_messages=4, group_window_s=2.1)
FLIPS = 16


async def test_flips_faster_than_the_group_limit_are_all_shown_without_a_429(
    tmp_path: Path,
) -> None:
    async with (
        running_emulator(EmulatorConfig(flood=TELEGRAM)) as emulator,
        table_with(emulator, database_file(tmp_path), ["Ann", "Bob"], limits=BOT) as table,
    ):
        board = await table.open_and_start(["Ann", "Bob"])
        order = [board.turn, "Bob" if board.turn == "Ann" else "Ann"]
        for index in range(FLIPS):
            player = order[index % 2]
            assert player is not None
            await table.command(player, "flip")
        await table.client.wait_for(
            lambda: _flips_shown(table.client, table.chat_id),
            timeout=30,
            what=f"{FLIPS} flips shown",
        )
        boards = [m for m in await table.messages() if "face-down" in m.text]
        # Coalescing: far fewer board messages than flips, and no refused send.
        assert len(boards) < FLIPS
        assert await _count_flips(emulator.client, table.chat_id) == FLIPS
        assert await emulator.client.violations() == []
        refused = [c for c in await emulator.client.calls() if c.status == 429]
        assert refused == []


async def _flips_shown(client: EmulatorClient, chat_id: int) -> bool | None:
    """True once every flip appears in some message (None until then)."""
    return True if await _count_flips(client, chat_id) >= FLIPS else None


async def _count_flips(client: EmulatorClient, chat_id: int) -> int:
    texts = [m.text for m in await client.transcript(chat_id)]
    return sum(len(re.findall(r"^\w+ flips ", text, re.MULTILINE)) for text in texts)
