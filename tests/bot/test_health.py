"""``/health`` and ``/ready`` on the webhook listener: what a proxy or an orchestrator reads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from telesnap.bot.callbacks import CallbackSigner
from telesnap.bot.health import Readiness, install_readiness
from telesnap.bot.receipts import ReceiptBook
from telesnap.bot.webhook import WebhookServer


@dataclass
class FakeApplication:
    """What the listener uses of the Application: its bot data and its update queue."""

    bot: Any = None
    bot_data: dict[str, Any] = field(default_factory=dict)
    update_queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)


async def answers() -> None:
    """A probe whose part answers."""


async def refuses() -> None:
    """A probe whose part refuses (the database is down, say)."""
    raise ConnectionRefusedError("connection refused")


@pytest.fixture
async def listener() -> AsyncIterator[tuple[WebhookServer, FakeApplication]]:
    application = FakeApplication()
    server = WebhookServer(
        application,  # type: ignore[arg-type]
        ReceiptBook(CallbackSigner.for_token("123:secret")),
        secret="s3cret",
        host="127.0.0.1",
        port=0,
    )
    await server.start()
    try:
        yield server, application
    finally:
        await server.stop()


async def get(server: WebhookServer, path: str) -> tuple[int, dict[str, Any]]:
    url = f"http://127.0.0.1:{server.bound_port}{path}"
    async with aiohttp.ClientSession() as session, session.get(url) as reply:
        return reply.status, await reply.json()


async def test_health_answers_while_the_process_runs(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    assert await get(server, "/health") == (200, {"alive": True})


async def test_ready_when_the_database_and_the_bot_api_answer(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, application = listener
    install_readiness(application, Readiness(answers, answers))  # type: ignore[arg-type]
    assert await get(server, "/ready") == (200, {"ready": True})


async def test_not_ready_names_what_fails_and_logs_it_once(
    listener: tuple[WebhookServer, FakeApplication], caplog: pytest.LogCaptureFixture
) -> None:
    server, application = listener
    install_readiness(application, Readiness(refuses, answers))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="telesnap.bot.health"):
        for _ in range(3):
            status, body = await get(server, "/ready")
            assert status == 503
            assert body == {
                "ready": False,
                "problems": ["database: ConnectionRefusedError: connection refused"],
            }
    assert [r.getMessage() for r in caplog.records] == [
        "not ready: database: ConnectionRefusedError: connection refused"
    ]


async def test_a_probe_that_hangs_counts_as_failed_after_the_timeout(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, application = listener
    never = asyncio.Event()
    readiness = Readiness(answers, never.wait, timeout_s=0.05)
    install_readiness(application, readiness)  # type: ignore[arg-type]
    status, body = await get(server, "/ready")
    assert (status, body["problems"]) == (503, ["bot api: no answer within 0.05 s"])


async def test_not_ready_before_the_checks_are_installed(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    status, body = await get(server, "/ready")
    assert (status, body["problems"]) == (503, ["the readiness checks are not installed"])
