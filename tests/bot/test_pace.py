"""The pace: a burst then an even spacing per group, the bot-wide window, shared across workers."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from contextlib import AsyncExitStack
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Bot

from telesnap.bot.delivery.pace import STALE_SEND_S, FloodLimits, Pacer
from telesnap.coordination import Coordination, LocalCoordination, PostgresCoordination
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.testing import RunningEmulator, running_emulator

GROUP = -500
# Telegram's 20 messages a minute per group, scaled down to 5 every 2 seconds.
TELEGRAM = TelegramFloodLimits(group_per_minute=5, group_window_seconds=2.0)
BOT = FloodLimits(group_messages=5, group_window_s=2.1, group_burst=2)


class ManualTime:
    """A clock that moves only when the pacer sleeps (the tests never wait out real time)."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


async def send_paced(pacer: Pacer, clock: ManualTime, chat_ids: list[int]) -> list[float]:
    """Send one message to each of ``chat_ids`` in turn, each in its slot; when each went."""
    times = []
    for chat_id in chat_ids:
        await pacer.wait_for_slot(chat_id)
        times.append(clock.now)
        await pacer.sent(chat_id)
    return times


def local_pacer(limits: FloodLimits, clock: ManualTime) -> Pacer:
    return Pacer(limits, LocalCoordination(), clock, clock.sleep)


async def test_a_busy_group_gets_a_small_burst_then_an_even_pace() -> None:
    limits = FloodLimits()
    clock = ManualTime()
    times = await send_paced(local_pacer(limits, clock), clock, [GROUP] * 45)
    assert times[: limits.group_burst] == [0.0] * limits.group_burst
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    steady = gaps[limits.group_burst - 1 :]
    assert max(steady) == pytest.approx(limits.group_interval_s)
    assert min(steady) == pytest.approx(limits.group_interval_s)
    assert 3.0 <= limits.group_interval_s <= 4.0
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.group_window_s]
        assert len(inside) <= limits.group_messages, "never over the group's window"


async def test_a_group_that_plays_slowly_is_never_held_back() -> None:
    limits = FloodLimits()
    clock = ManualTime()
    pacer = local_pacer(limits, clock)
    times = []
    for _ in range(10):
        times += await send_paced(pacer, clock, [GROUP])
        clock.now += limits.group_interval_s  # a flip every few seconds
    assert times == pytest.approx([index * limits.group_interval_s for index in range(10)])


async def test_the_whole_bot_stays_under_its_window_across_many_chats() -> None:
    limits = FloodLimits()
    clock = ManualTime()
    times = await send_paced(local_pacer(limits, clock), clock, [-1000 - n for n in range(75)])
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.bot_window_s]
        assert len(inside) <= limits.bot_messages
    assert max(times) <= 2 * limits.bot_window_s + 1e-9, "and no slower than the window needs"


class SharedStates:
    """The coordination's shared pace states, kept in memory (compare-and-swap as stored)."""

    shared = True

    def __init__(self, workers: int = 1) -> None:
        self.states: dict[int, dict[str, Any]] = {}
        self.workers = workers
        self.swaps_refused = 0

    async def load_pace(self, chat_id: int) -> dict[str, Any]:
        return dict(self.states.get(chat_id, {}))

    async def swap_pace(self, chat_id: int, seen: dict[str, Any], new: dict[str, Any]) -> bool:
        stored = self.states.get(chat_id, {})
        if stored.get("v") != seen.get("v"):
            self.swaps_refused += 1
            return False
        new = {**new, "v": int(seen.get("v") or 0) + 1}
        self.states[chat_id] = new
        seen.clear()
        seen.update(new)
        return True

    def bot_share(self) -> float:
        return 1.0 / self.workers


def shared_pacer(limits: FloodLimits, states: SharedStates, clock: ManualTime) -> Pacer:
    coordination: Coordination = states  # type: ignore[assignment]
    return Pacer(limits, coordination, clock, clock.sleep)


async def test_two_workers_sharing_the_states_count_each_others_messages() -> None:
    states = SharedStates(workers=2)
    clock = ManualTime(1000.0)
    pacers = [shared_pacer(FloodLimits(), states, clock) for _ in range(2)]
    times = []
    for _ in range(10):  # the two workers take turns posting to one group
        for pacer in pacers:
            times += await send_paced(pacer, clock, [GROUP])
    assert states.swaps_refused > 0, "each saw the other's sends"
    limits = FloodLimits()
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.group_window_s]
        assert len(inside) <= limits.group_messages, "the group's window, across both"
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert min(gaps[limits.group_burst :]) == pytest.approx(limits.group_interval_s), "one pace"


async def test_each_worker_keeps_its_share_of_the_bot_wide_window() -> None:
    limits = FloodLimits()
    clock = ManualTime()
    pacer = shared_pacer(limits, SharedStates(workers=3), clock)
    times = await send_paced(pacer, clock, [-1000 - n for n in range(30)])
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.bot_window_s]
        assert len(inside) <= limits.bot_messages // 3, "a third of the 30 a second"


async def test_a_send_whose_worker_died_stops_holding_its_slot_while_the_chat_stays_busy() -> None:
    limits = FloodLimits(private_messages=2, private_window_s=1.0, bot_messages=2)
    states = SharedStates()
    clock = ManualTime(1000.0)
    dead, live = (shared_pacer(limits, states, clock) for _ in range(2))
    chat_id = 7  # a private chat: two messages a second

    assert await dead.reserve(chat_id) == 0  # ... and the worker is killed mid-send
    while clock.now < 1000.0 + STALE_SEND_S + 5:  # the other worker keeps the chat busy
        assert await live.reserve(chat_id) == 0
        clock.now += 0.5
        await live.sent(chat_id)
        clock.now += 1.5  # the window has passed

    # Both slots are free again: the dead send was given up STALE_SEND_S after it began.
    assert await live.reserve(chat_id) == 0
    await live.sent(chat_id)
    assert await live.reserve(chat_id) == 0


async def _send_from_two_workers(
    running: RunningEmulator, pacers: tuple[Pacer, Pacer], each: int
) -> int:
    """Two workers each post ``each`` messages to one group, in their slots; the group's id."""
    client = running.client
    user = await client.create_user("Ann")
    chat_id = int((await client.create_chat("group", members=[int(user["id"])]))["id"])

    async def worker(number: int, pacer: Pacer, bot: Bot) -> None:
        for n in range(each):
            await pacer.wait_for_slot(chat_id)
            try:
                await bot.send_message(chat_id, f"worker {number}: message {n}")
            finally:
                await pacer.sent(chat_id)

    async with AsyncExitStack() as stack:
        bots = [
            await stack.enter_async_context(Bot(running.token, base_url=running.base_url))
            for _ in pacers
        ]
        pairs = enumerate(zip(pacers, bots, strict=True))
        sends = (worker(n, pacer, bot) for n, (pacer, bot) in pairs)
        await asyncio.wait_for(asyncio.gather(*sends, return_exceptions=True), 60)
    return chat_id


async def test_two_workers_on_one_postgresql_database_stay_within_a_groups_window(
    postgres_engine: AsyncEngine,
) -> None:
    coordinations = [PostgresCoordination(postgres_engine) for _ in range(2)]
    for coordination in coordinations:
        await coordination.start(lambda: None)
        await coordination.joined()
    try:
        pacers = (Pacer(BOT, coordinations[0]), Pacer(BOT, coordinations[1]))
        async with running_emulator(EmulatorConfig(flood=TELEGRAM)) as running:
            chat_id = await _send_from_two_workers(running, pacers, each=5)
            client = running.client
            assert len(await client.transcript(chat_id)) == 10, "every message arrived"
            assert [c for c in await client.calls("sendMessage") if c.status == 429] == []
            assert await client.violations() == []
    finally:
        for coordination in coordinations:
            await coordination.close()


async def test_two_workers_counting_alone_exceed_the_window_between_them() -> None:
    """The check above has teeth: windows kept per worker let a group get too many."""
    alone = (
        Pacer(BOT, LocalCoordination(), time.time),
        Pacer(BOT, LocalCoordination(), time.time),
    )
    async with running_emulator(EmulatorConfig(flood=TELEGRAM)) as running:
        await _send_from_two_workers(running, alone, each=4)
        refused = [c for c in await running.client.calls("sendMessage") if c.status == 429]
        assert refused, "two bursts and two paces at once are more than the group may get"


class SharedStatesOverTheNetwork(SharedStates):
    """As stored on PostgreSQL: each swap waits for the database, and others run meanwhile."""

    async def swap_pace(self, chat_id: int, seen: dict[str, Any], new: dict[str, Any]) -> bool:
        await asyncio.sleep(0)
        return await super().swap_pace(chat_id, seen, new)


async def test_chats_taking_slots_at_once_on_postgresql_stay_under_the_bot_wide_window() -> None:
    limits = FloodLimits()
    pacer = shared_pacer(limits, SharedStatesOverTheNetwork(), ManualTime(1000.0))
    delays = await asyncio.gather(*(pacer.reserve(-1000 - n) for n in range(60)))
    assert sum(delay == 0 for delay in delays) == limits.bot_messages


async def test_a_slot_whose_swap_fails_is_given_back_to_the_bot_wide_window() -> None:
    limits = FloodLimits(bot_messages=1)
    states = SharedStatesOverTheNetwork()
    pacer = shared_pacer(limits, states, ManualTime(1000.0))
    states.states[GROUP] = {"v": 7}  # another worker sent to the group: the first swap fails
    assert await pacer.reserve(GROUP) == 0.0, "the retry found the bot-wide slot free"
    assert states.swaps_refused == 1


class UnreadableStates(SharedStates):
    """Shared states whose store is away for the first ``failures`` reads (an outage)."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    async def swap_pace(self, chat_id: int, seen: dict[str, Any], new: dict[str, Any]) -> bool:
        if self.failures:
            self.failures -= 1
            raise ConnectionResetError("the database went away")
        return await super().swap_pace(chat_id, seen, new)


async def test_an_outage_of_the_shared_windows_logs_its_traceback_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every chat waits a second and asks again: an outage is a line a try, not a traceback."""
    clock = ManualTime()
    pacer = shared_pacer(FloodLimits(), UnreadableStates(failures=6), clock)
    with caplog.at_level(logging.INFO, logger="telesnap.bot.delivery.pace"):
        for chat_id in (-1, -2, -3):
            await pacer.wait_for_slot(chat_id)
            await pacer.sent(chat_id)
    failed = [r for r in caplog.records if "cannot be read" in r.getMessage()]
    assert len(failed) == 6
    assert [r.exc_info is not None for r in failed] == [True] + [False] * 5
    assert "(ConnectionResetError: the database went away)" in failed[-1].getMessage()
    assert caplog.records[-1].getMessage() == (
        "reading the flood-limit windows works again, after 6 failures"
    )


async def test_a_restart_keeps_a_busy_group_within_its_window() -> None:
    """Counting the stopped process's sends keeps the new one from bursting into the window
    Telegram still counts (where the moments it counts differ by a little, a burst on a full
    window is a 429)."""
    limits = FloodLimits()
    clock = ManualTime()
    before = await send_paced(local_pacer(limits, clock), clock, [GROUP] * 30)
    clock.now += 1.0  # killed, started again
    restarted = local_pacer(limits, clock)
    window = [clock.now - sent for sent in before if clock.now - sent < limits.group_window_s]
    restarted.sent_before_this_start(GROUP, window)
    times = before + await send_paced(restarted, clock, [GROUP] * 10)
    for start in range(len(times)):
        inside = [t for t in times[start:] if t < times[start] + limits.group_window_s]
        assert len(inside) <= limits.group_messages, "never over the group's window"
    gaps = [later - earlier for earlier, later in itertools.pairwise(times[len(before) - 1 :])]
    assert gaps == pytest.approx([limits.group_interval_s] * 10), "the steady pace, no burst"


async def test_a_group_quiet_before_the_start_is_not_held_back() -> None:
    limits = FloodLimits()
    clock = ManualTime(start=1000.0)
    pacer = local_pacer(limits, clock)
    pacer.sent_before_this_start(GROUP, [])  # nothing sent within the window
    times = await send_paced(pacer, clock, [GROUP] * limits.group_burst)
    assert times == [1000.0] * limits.group_burst
