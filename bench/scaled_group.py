"""A group, its players and the bot, under Telegram's flood limits with time running faster.

The set-up the pace benchmarks share (bench/pace.py, bench/board_styles.py): the
emulator enforces Telegram's limits and the bot its own, both windows shortened
``scale`` times, and the bot plays on a fresh SQLite file.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from telesnap.app import BotRunner
from telesnap.bot.delivery.pace import FloodLimits as BotFloodLimits
from telesnap.config import Settings
from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.testing import RunningEmulator, running_emulator


@dataclass(frozen=True)
class Group:
    """The emulator, the group's chat id and its players' user ids (by name)."""

    emulator: RunningEmulator
    chat_id: int
    users: dict[str, int]
    players: tuple[str, ...]
    scale: float

    @property
    def client(self) -> EmulatorClient:
        return self.emulator.client


@asynccontextmanager
async def scaled_group(
    scale: float, players: Sequence[str], title: str, *, admins: bool = False
) -> AsyncIterator[Group]:
    """The emulator under Telegram's limits, ``scale`` times faster, with a group of ``players``.

    All of them are the group's admins if ``admins``.
    """
    telegram = TelegramFloodLimits(group_window_seconds=60.0 / scale)
    async with running_emulator(EmulatorConfig(flood=telegram)) as emulator:
        client = emulator.client
        users = {name: int((await client.create_user(name))["id"]) for name in players}
        members = list(users.values())
        chat = await client.create_chat(
            "group", title=title, members=members, admins=members if admins else ()
        )
        yield Group(emulator, int(chat["id"]), users, tuple(players), scale)


@asynccontextmanager
async def bot_running(group: Group) -> AsyncIterator[None]:
    """The bot, with its own limits scaled as Telegram's are, on a fresh SQLite file."""
    bot_limits = BotFloodLimits(group_window_s=61.0 / group.scale)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            token=group.emulator.token,
            api_url=group.emulator.url,
            database_url=f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}",
        )
        runner = BotRunner(settings, limits=bot_limits, shuffle_seed=7)
        await runner.start()
        try:
            yield
        finally:
            await runner.stop()


async def start_game(group: Group) -> None:
    """The first player opens a lobby, everyone else joins, the first player starts."""
    client, chat_id, users = group.client, group.chat_id, group.users
    first, *others = group.players
    await client.send_command(chat_id, users[first], "newgame")
    lobby = await client.wait_for_message(chat_id, lambda m: "Join" in m.button_texts)
    for name in others:
        query = await client.press(chat_id, lobby.message_id, users[name], button_text="Join")
        await client.wait_for_toast(callback_query_id=query)
    query = await client.press(chat_id, lobby.message_id, users[first], button_text="Start")
    await client.wait_for_toast(callback_query_id=query)
