"""Fixtures for end-to-end tests: an emulator, and a checked violation list at the end."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from telesnap.emulator.testing import RunningEmulator, running_emulator


@pytest.fixture
async def emulator() -> AsyncIterator[RunningEmulator]:
    async with running_emulator(flood_limits=False) as running:
        yield running
        violations = await running.client.violations()
        assert violations == [], f"the bot broke Bot API rules: {violations}"
