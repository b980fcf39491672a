"""Two workers sharing one database keep Telegram's limits together, not each on its own."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot

from telesnap.bot.delivery.pace import FloodLimits, Outbox
from telesnap.bot.delivery.pace import STALE_SEND_S
from telesnap.bot.delivery.direct import TextPost
from telesnap.bot.delivery.slots import MemorySlots, Slots, StateStep, StoredSlots
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.testing import RunningEmulator, running_emulator
from telesnap.services.outbox.service import OutboxService
from telesnap.storage.uow import UnitsOfWork

# Telegram's 20 messages a minute per group, scaled down to 5 every 2 seconds.
TELEGRAM = TelegramFloodLimits(group_per_minute=5, group_window_seconds=2.0)
BOT = FloodLimits(group_messages=5, group_window_s=2.1, group_burst=2)
Sessions = async_sessionmaker[AsyncSession]


async def _send_from_two_workers(
    running: RunningEmulator, slots: tuple[Slots, Slots], each: int
) -> int:
    """Two outboxes (two workers) each post ``each`` messages to one group; return its id."""
    client = running.client
    user = await client.create_user("Ann")
    chat_id = int((await client.create_chat("group", members=[int(user["id"])]))["id"])
    async with AsyncExitStack() as stack:
        outboxes = []
        for worker, worker_slots in enumerate(slots):
            bot = await stack.enter_async_context(Bot(running.token, base_url=running.base_url))
            outbox = Outbox(bot, BOT, time.time, slots=worker_slots)
            stack.push_async_callback(outbox.close)
            outboxes.append((worker, outbox))
        sent = [
            outbox.submit(chat_id, TextPost(chat_id, 0, f"worker {worker}: message {n}"))
            for n in range(each)
            for worker, outbox in outboxes
        ]
        await asyncio.wait_for(asyncio.gather(*sent), 60)
    return chat_id


async def test_two_workers_on_one_database_stay_within_a_groups_window_together(
    session_factory: Sessions,
) -> None:
    units = UnitsOfWork(session_factory)
    shared = tuple(
        StoredSlots(BOT, OutboxService(units, owner=f"worker-{n}").with_states, time.time)
        for n in range(2)
    )
    async with running_emulator(EmulatorConfig(flood=TELEGRAM)) as running:
        chat_id = await _send_from_two_workers(running, (shared[0], shared[1]), each=5)
        client = running.client
        assert len(await client.transcript(chat_id)) == 10, "every message arrived"
        assert [c for c in await client.calls("sendMessage") if c.status == 429] == []
        assert await client.violations() == []


async def test_two_workers_counting_alone_exceed_the_window_between_them() -> None:
    """The check above has teeth: windows kept per worker let a group get too many."""
    alone = (MemorySlots(BOT, time.time), MemorySlots(BOT, time.time))
    async with running_emulator(EmulatorConfig(flood=TELEGRAM)) as running:
        await _send_from_two_workers(running, alone, each=4)
        refused = [c for c in await running.client.calls("sendMessage") if c.status == 429]
        assert refused, "two bursts and two paces at once are more than the group may get"


class _Database:
    """The pace states the workers share, as the outbox service stores them (no database)."""

    def __init__(self) -> None:
        self.states: dict[int, dict[str, Any]] = {}

    async def with_states(self, keys: list[int], step: StateStep) -> Any:
        states, answer = step([dict(self.states.get(key, {})) for key in keys])
        self.states.update(zip(keys, states, strict=True))
        return answer


async def test_a_send_whose_worker_died_stops_holding_its_slot_while_the_chat_stays_busy() -> None:
    limits = FloodLimits(private_messages=2, private_window_s=1.0, bot_messages=2)
    now = [1000.0]
    database = _Database()
    dead, live = (StoredSlots(limits, database.with_states, lambda: now[0]) for _ in range(2))
    chat_id = 7  # a private chat: two messages a second

    assert await dead.reserve(chat_id) == 0  # ... and the worker is killed mid-send
    while now[0] < 1000.0 + STALE_SEND_S + 5:  # the other worker keeps the chat busy
        assert await live.reserve(chat_id) == 0
        now[0] += 0.5
        await live.finish(chat_id)
        now[0] += 1.5  # the window has passed

    # Both slots are free again: the dead send was given up STALE_SEND_S after it began.
    assert await live.reserve(chat_id) == 0
    assert await live.reserve(chat_id) == 0
