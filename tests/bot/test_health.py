"""``/health`` and ``/ready`` on the webhook listener: what a proxy or an orchestrator reads."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import make_mocked_request
from sqlalchemy.exc import OperationalError

from telesnap.bot.ingress.health import Readiness
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.ingress.webhook import WebhookServer
from telesnap.bot.render.callbacks import CallbackSigner


@dataclass
class FakeApplication:
    """What the listener uses of the Application: its bot and its update queue."""

    bot: Any = None
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
    server, _ = listener
    server.readiness = Readiness(answers, answers)
    assert await get(server, "/ready") == (200, {"ready": True})


async def test_not_ready_names_what_fails_and_logs_it_once(
    listener: tuple[WebhookServer, FakeApplication], caplog: pytest.LogCaptureFixture
) -> None:
    server, _ = listener
    server.readiness = Readiness(refuses, answers)
    with caplog.at_level(logging.WARNING, logger="telesnap.bot.ingress.health"):
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


async def test_not_ready_while_the_coordination_connection_cannot_be_opened(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    server.readiness = Readiness(answers, answers, refuses)
    status, body = await get(server, "/ready")
    assert (status, body) == (
        503,
        {"ready": False, "problems": ["coordination: ConnectionRefusedError: connection refused"]},
    )


async def test_a_probe_that_hangs_counts_as_failed_after_the_timeout(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    never = asyncio.Event()
    readiness = Readiness(answers, never.wait, timeout_s=0.05)
    server.readiness = readiness
    status, body = await get(server, "/ready")
    assert (status, body["problems"]) == (503, ["bot api: no answer within 0.05 s"])


async def test_not_ready_before_the_checks_are_installed(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    status, body = await get(server, "/ready")
    assert (status, body["problems"]) == (503, ["the readiness checks are not installed"])


@dataclass
class CountingProbe:
    """A probe that counts how often it runs."""

    runs: int = 0

    async def __call__(self) -> None:
        self.runs += 1


async def test_ready_probes_at_most_once_per_period(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    now = [100.0]
    database, bot_api = CountingProbe(), CountingProbe()
    readiness = Readiness(database, bot_api, cache_s=1.5, clock=lambda: now[0])
    server.readiness = readiness
    for _ in range(20):
        assert await get(server, "/ready") == (200, {"ready": True})
    assert (database.runs, bot_api.runs) == (1, 1)
    now[0] += 1.5
    await get(server, "/ready")
    assert (database.runs, bot_api.runs) == (2, 2)


async def bot_api_token_error() -> None:
    """A Bot API probe whose error text holds the token (as aiohttp's do)."""
    raise OSError("cannot reach http://api/bot123456:AAsecret-token-part/getMe")


async def test_ready_tells_its_reasons_only_to_this_machine(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    server, _ = listener
    server.readiness = Readiness(answers, bot_api_token_error)
    status, body = await get(server, "/ready")  # from 127.0.0.1
    assert status == 503
    assert body["problems"] == ["bot api: OSError: cannot reach http://api/bot123456:***/getMe"]
    route = next(
        r for r in server.app.router.routes() if r.resource and r.resource.canonical == "/ready"
    )
    outside = make_mocked_request("GET", "/ready", transport=PeerTransport("203.0.113.9"))
    reply = await route.handler(outside)
    assert reply.status == 503
    assert json.loads(reply.body) == {"ready": False}


@dataclass
class PeerTransport:
    """The transport of a request from ``address`` (what aiohttp reads its remote from)."""

    address: str

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (self.address, 40000) if name == "peername" else default

    def is_closing(self) -> bool:
        return False


async def test_a_database_failure_is_named_without_sqlalchemys_additions(
    listener: tuple[WebhookServer, FakeApplication],
) -> None:
    """The database's own words, not the statement and link SQLAlchemy wraps them in."""

    async def away() -> None:
        cause = ConnectionRefusedError('database "telesnap" is not accepting connections')
        raise OperationalError("SELECT 1", None, cause)

    server, _ = listener
    server.readiness = Readiness(away, answers)
    status, body = await get(server, "/ready")
    assert (status, body["problems"]) == (
        503,
        ['database: ConnectionRefusedError: database "telesnap" is not accepting connections'],
    )
