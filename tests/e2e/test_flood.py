"""Fast play under Telegram's flood limits: nothing lost, no 429."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from telesnap.bot.delivery.pace import FloodLimits as BotFloodLimits
from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.testing import running_emulator

from .harness import Table, database_file, table_with

# Telegram's 20 messages a minute per group, scaled down to 4 every 2 seconds.
TELEGRAM = TelegramFloodLimits(group_per_minute=4, group_window_seconds=2.0)
BOT = BotFloodLimits(group_messages=4, group_window_s=2.1, group_burst=1)
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


# Groups loose enough that the bot-wide 30 a second is the limit that binds.
BUSY_TELEGRAM = TelegramFloodLimits(group_per_minute=20, group_window_seconds=1.0)
BUSY_BOT = BotFloodLimits(group_messages=20, group_window_s=1.05, group_burst=6)
BUSY_GROUPS = 10
BUSY_FLIPS = 12


async def test_many_busy_groups_at_once_never_provoke_a_429(tmp_path: Path) -> None:
    async with (
        running_emulator(EmulatorConfig(flood=BUSY_TELEGRAM)) as emulator,
        table_with(emulator, database_file(tmp_path), ["P0", "Q0"], limits=BUSY_BOT) as first,
    ):
        tables = [first]
        for group in range(1, BUSY_GROUPS):
            names = [f"P{group}", f"Q{group}"]
            users = {n: int((await emulator.client.create_user(n))["id"]) for n in names}
            chat = await emulator.client.create_chat("group", members=list(users.values()))
            tables.append(Table(emulator, first.database_url, int(chat["id"]), users))
        await asyncio.gather(*(_play_fast(table) for table in tables))
        for table in tables:
            await table.client.wait_for(
                lambda table=table: _flips_shown(table.client, table.chat_id, BUSY_FLIPS),
                timeout=60,
                what=f"{BUSY_FLIPS} flips shown in chat {table.chat_id}",
            )
        refused = [c for c in await emulator.client.calls() if c.status == 429]
        assert refused == [], f"{len(refused)} sends refused with a 429"
        assert await emulator.client.violations() == []


async def _play_fast(table: Table) -> None:
    """Open a game and send every flip at once, in turn (the boards will lag behind)."""
    first, second = table.players
    board = await table.open_and_start([first, second], limit_s=60)
    order = [board.turn, second if board.turn == first else first]
    for index in range(BUSY_FLIPS):
        player = order[index % 2]
        assert player is not None
        await table.command(player, "flip")


async def _flips_shown(client: EmulatorClient, chat_id: int, flips: int = FLIPS) -> bool | None:
    """True once every flip appears in some message (None until then)."""
    return True if await _count_flips(client, chat_id) >= flips else None


async def _count_flips(client: EmulatorClient, chat_id: int) -> int:
    texts = [m.text for m in await client.transcript(chat_id)]
    return sum(len(re.findall(r"^\w+ flips ", text, re.MULTILINE)) for text in texts)
