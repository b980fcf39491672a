"""Separate workers on one database: only a start that finds nobody else alive resumes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from telesnap.app import BotRunner
from telesnap.config import Settings
from telesnap.emulator.testing import RunningEmulator, running_emulator

from .harness import NO_FLOOD, Table, table_with

BACK = "I am back: the game goes on."
COLD = "cold start: no other worker is alive on this database"


POLLS_CONFLICT = "Conflict: terminated by other getUpdates request"


@pytest.fixture
async def emulator() -> AsyncIterator[RunningEmulator]:
    """The emulator, where two workers' long polls end each other's as on Telegram.

    Production runs several workers on a webhook; these check which start resumes, not how
    the updates come. Every other violation still fails the test.
    """
    async with running_emulator(flood_limits=False) as running:
        yield running
        violations = await running.client.violations()
        others = [v for v in violations if not v.description.startswith(POLLS_CONFLICT)]
        assert others == [], f"the bot broke Bot API rules: {others}"


@pytest.fixture
def postgres_url(database_url: str) -> str:
    if database_url.startswith("sqlite"):
        pytest.skip("one process on SQLite: every start is cold (see test_resilience)")
    return database_url


def another_worker(table: Table) -> BotRunner:
    """A worker of its own process on the table's database (same bot, same emulator)."""
    settings = Settings(
        token=table.running.token, api_url=table.running.url, database_url=table.database_url
    )
    return BotRunner(settings, limits=NO_FLOOD, shuffle_seed=7)


async def texts_of(table: Table) -> list[str]:
    await table.client.wait_until_idle()
    return [message.text for message in await table.messages()]


def cold_starts(caplog: pytest.LogCaptureFixture) -> int:
    """How many starts logged that they found no other worker alive."""
    return sum(record.getMessage() == COLD for record in caplog.records)


async def test_a_worker_that_joins_a_running_one_leaves_the_games_alone(
    emulator: RunningEmulator, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="telesnap.app")
    async with table_with(emulator, postgres_url, ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert cold_starts(caplog) == 1
        before = await texts_of(table)
        second = another_worker(table)
        try:
            await second.start()
            assert cold_starts(caplog) == 1, "the second worker joined the first"
            assert await texts_of(table) == before, "no 'I am back', no board posted again"
            assert board.turn is not None
            await table.press(board.turn, board.message, "Flip")
            await table.next_board()
        finally:
            await second.stop()
        assert BACK not in "\n".join(await texts_of(table))

        await table.stop_bot()  # both are gone now: the next start is cold
        await table.start_bot()
        assert cold_starts(caplog) == 2
        await table.wait_for_text(BACK)
        resumed = await table.next_board()
        assert resumed.turn is not None


async def test_of_two_workers_starting_at_once_exactly_one_resumes(
    emulator: RunningEmulator, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="telesnap.app")
    async with table_with(emulator, postgres_url, ["Ann", "Bob"]) as table:
        await table.open_and_start(["Ann", "Bob"])
        await table.stop_bot()
        workers = [another_worker(table), another_worker(table)]
        caplog.clear()
        try:
            await asyncio.gather(*(worker.start() for worker in workers))
            assert cold_starts(caplog) == 1
            await table.wait_for_text(BACK)
            texts = await texts_of(table)
        finally:
            await asyncio.gather(*(worker.stop() for worker in workers))
        assert sum(BACK in text for text in texts) == 1, texts
