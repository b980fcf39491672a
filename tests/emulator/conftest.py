"""Fixtures: an in-process emulator on a free port, and a minimal bot polling it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram.ext import Application

from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.testing import FakeClock, RunningEmulator, running_emulator

from .raw import RawBotApi
from .sample_bot import SampleBot, polling


@pytest.fixture
async def emulator() -> AsyncIterator[RunningEmulator]:
    async with running_emulator() as running:
        yield running


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def clocked_emulator(fake_clock: FakeClock) -> AsyncIterator[RunningEmulator]:
    async with running_emulator(EmulatorConfig(clock=fake_clock)) as running:
        yield running


@pytest.fixture
async def sample_bot(emulator: RunningEmulator) -> AsyncIterator[SampleBot]:
    bot = SampleBot(emulator)
    async with polling(bot.application):
        yield bot


@pytest.fixture
def application(sample_bot: SampleBot) -> Application:  # type: ignore[type-arg]
    return sample_bot.application


@pytest.fixture
async def api(emulator: RunningEmulator) -> AsyncIterator[RawBotApi]:
    raw = RawBotApi(emulator)
    yield raw
    await raw.session.close()


@pytest.fixture
async def clocked_api(clocked_emulator: RunningEmulator) -> AsyncIterator[RawBotApi]:
    raw = RawBotApi(clocked_emulator)
    yield raw
    await raw.session.close()
