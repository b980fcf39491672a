"""Helpers for tests that run the bot against an in-process emulator.

>>> clock = FakeClock()
>>> clock.advance(2.5)
>>> clock()
1002.5

Typical use in a pytest-asyncio test (the fixtures of ``tests/emulator/conftest.py``
are built from :func:`running_emulator`)::

    async with running_emulator() as emulator:
        app = application_builder(emulator).build()
        ...
        message = await emulator.client.wait_for_message(chat_id, lambda m: "Snap" in m.text)
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp

from .client import EmulatorClient
from .config import EmulatorConfig, FloodLimits
from .core import Emulator
from .guard import KEY_HEADER
from .server import EmulatorServer

if TYPE_CHECKING:
    from telegram.ext._applicationbuilder import InitApplicationBuilder


class FakeClock:
    """A monotonic clock that moves only when told to (starts at 1000 s)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        """Return the current time in seconds."""
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.now += seconds


@dataclass
class RunningEmulator:
    """An emulator serving on loopback, with a connected test client."""

    server: EmulatorServer
    client: EmulatorClient

    @property
    def emulator(self) -> Emulator:
        """The in-process emulator (its state, for checks the client does not offer)."""
        return self.server.emulator

    @property
    def url(self) -> str:
        """The server's base URL, e.g. ``http://127.0.0.1:54321``."""
        return self.server.url

    @property
    def token(self) -> str:
        """The bot token the emulator accepts."""
        return self.emulator.config.token

    def http_session(self) -> aiohttp.ClientSession:
        """An HTTP session that sends the run's key, as the page does (close it after)."""
        key = self.emulator.config.access_key
        return aiohttp.ClientSession(headers={KEY_HEADER: key} if key else None)

    @property
    def base_url(self) -> str:
        """The ``base_url`` for python-telegram-bot (``.../bot``; it appends the token)."""
        return f"{self.url}/bot"

    @property
    def base_file_url(self) -> str:
        """The ``base_file_url`` for python-telegram-bot."""
        return f"{self.url}/file/bot"


@asynccontextmanager
async def running_emulator(
    config: EmulatorConfig | None = None,
    *,
    flood_limits: bool = True,
    host: str = "127.0.0.1",
) -> AsyncIterator[RunningEmulator]:
    """Serve an emulator on a free loopback port for the duration of the block."""
    config = config or EmulatorConfig()
    if not flood_limits:
        config = dataclasses.replace(config, flood=FloodLimits(enabled=False))
    server = EmulatorServer(config)
    await server.start(host, 0)
    client = EmulatorClient(server.url, key=config.access_key)
    try:
        yield RunningEmulator(server, client)
    finally:
        await client.close()
        await server.stop()


def application_builder(running: RunningEmulator) -> InitApplicationBuilder:
    """Return a python-telegram-bot ``ApplicationBuilder`` pointed at ``running``."""
    from telegram.ext import ApplicationBuilder

    return (
        ApplicationBuilder()
        .token(running.token)
        .base_url(running.base_url)
        .base_file_url(running.base_file_url)
    )
