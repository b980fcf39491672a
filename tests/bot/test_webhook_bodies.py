"""The webhook: an update is answered 200 only once it is stored; what it cannot read, 2xx.

A body that is not an update gets a 2xx (after logging it), never a 500. An
update whose storing fails gets a 500 (Telegram delivers it again); while the
bot drains for a stop, 503.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from telesnap.bot.ingress.webhook import SECRET_HEADER, WebhookServer
from telesnap.services.inbox import InboxService
from telesnap.storage.database import session_factory
from telesnap.storage.uow import UnitsOfWork

from ..inbox_marks import is_processed
from .inbox_helpers import SAFETY_S, Worker, message_update

SECRET = "s3cret"
DEEP_LIST = "[" * 20_000 + "]" * 20_000  # within the 64 KiB limit, deeper than json reads
DEEP_OBJECT = '{"update_id": 9, "message": ' + '{"a": ' * 5_000 + "1" + "}" * 5_001


@dataclass
class BotOnly:
    """What the server uses of the Application: its bot."""

    bot: Any = None


@dataclass
class RecordingIntake:
    """Stands in for the intake: records what it was handed (or fails, as a dead database)."""

    received: list[dict[str, Any]] = field(default_factory=list)
    fails: bool = False

    async def receive(self, updates: Any, payloads: list[dict[str, Any]]) -> None:
        if self.fails:
            raise ConnectionError("the database went away")
        self.received.extend(payloads)


@pytest.fixture
async def server() -> AsyncIterator[tuple[WebhookServer, RecordingIntake]]:
    intake = RecordingIntake()
    hook = WebhookServer(
        BotOnly(),  # type: ignore[arg-type]
        intake,  # type: ignore[arg-type]
        secret=SECRET,
        host="127.0.0.1",
        port=0,
    )
    await hook.start()
    try:
        yield hook, intake
    finally:
        await hook.stop()


async def post(hook: WebhookServer, body: bytes) -> int:
    url = f"http://127.0.0.1:{hook.bound_port}{hook.path}"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers={SECRET_HEADER: SECRET}) as reply,
    ):
        return reply.status


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b"null",
        b"42",
        b'"text"',
        b"{}",
        b'{"update_id": "7"}',
        b'{"update_id": 7, "message": 3}',
        b"not json at all",
        b"\xff\xfe",
        DEEP_LIST.encode(),
        DEEP_OBJECT.encode(),
    ],
    ids=[
        "list",
        "null",
        "number",
        "string",
        "no-id",
        "text-id",
        "bad-message",
        "not-json",
        "not-utf8",
        "deep-list",
        "deep-object",
    ],
)
async def test_a_body_that_is_not_an_update_gets_a_2xx_and_is_logged(
    server: tuple[WebhookServer, RecordingIntake], body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    hook, intake = server
    with caplog.at_level(logging.WARNING, logger="telesnap.bot.ingress.webhook"):
        status = await post(hook, body)
    assert status == 200
    assert intake.received == []
    assert any("not an update" in record.getMessage() for record in caplog.records)


async def test_an_update_is_handed_to_the_inbox(
    server: tuple[WebhookServer, RecordingIntake],
) -> None:
    hook, intake = server
    command = message_update(5, -5).to_dict()
    assert await post(hook, json.dumps(command).encode()) == 200
    assert intake.received == [command]


async def test_an_update_that_could_not_be_stored_is_not_acknowledged(
    server: tuple[WebhookServer, RecordingIntake], caplog: pytest.LogCaptureFixture
) -> None:
    hook, intake = server
    intake.fails = True
    with caplog.at_level(logging.ERROR, logger="telesnap.bot.ingress.webhook"):
        statuses = [
            await post(hook, json.dumps(message_update(6, -5).to_dict()).encode()) for _ in range(3)
        ]
    assert statuses == [500] * 3, "Telegram delivers it again"
    lines = [
        record for record in caplog.records if "could not store update 6" in record.getMessage()
    ]
    assert len(lines) == 3
    assert [record.exc_info is not None for record in lines] == [True, False, False], (
        "an outage's traceback once, not once per delivery"
    )
    intake.fails = False
    with caplog.at_level(logging.INFO, logger="telesnap.bot.ingress.webhook"):
        assert await post(hook, json.dumps(message_update(6, -5).to_dict()).encode()) == 200
    assert "webhook: storing updates works again, after 3 failures" in caplog.messages


async def test_a_draining_bot_refuses_new_updates_so_they_go_elsewhere(
    server: tuple[WebhookServer, RecordingIntake],
) -> None:
    hook, intake = server
    hook.drain()
    assert await post(hook, json.dumps({"update_id": 7}).encode()) == 503
    assert intake.received == []


async def test_the_row_is_committed_before_the_200(engine: AsyncEngine) -> None:
    """With the real inbox: when the 200 arrives, another connection already sees the row."""
    handled = asyncio.Event()

    async def handle(update: Any) -> None:
        handled.set()

    worker = Worker(engine, handle)
    await worker.start()
    hook = WebhookServer(
        BotOnly(),  # type: ignore[arg-type]
        worker.intake,
        secret=SECRET,
        host="127.0.0.1",
        port=0,
    )
    await hook.start()
    try:
        update = message_update(11, -5)
        assert await post(hook, json.dumps(update.to_dict()).encode()) == 200
        seen = InboxService(UnitsOfWork(session_factory(engine)))
        stored = await seen.pending(11)
        assert stored is not None or await is_processed(engine, 11), "stored before the 200"
        async with asyncio.timeout(SAFETY_S):
            await handled.wait()
    finally:
        await hook.stop()
        await worker.stop()


async def test_a_body_above_64_kib_is_refused_with_413(
    server: tuple[WebhookServer, RecordingIntake],
) -> None:
    hook, intake = server
    padding = "x" * (70 * 1024)
    body = json.dumps({"update_id": 7, "message": {"text": padding}}).encode()
    assert await post(hook, body) == 413
    assert intake.received == []


async def test_an_idle_connection_is_closed_after_the_keep_alive_timeout() -> None:
    hook = WebhookServer(
        BotOnly(),  # type: ignore[arg-type]
        RecordingIntake(),  # type: ignore[arg-type]
        secret=SECRET,
        host="127.0.0.1",
        port=0,
        keepalive_timeout_s=0.2,
    )
    await hook.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", hook.bound_port)
        writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        async with asyncio.timeout(10):  # the server ends the idle connection well before
            while await reader.read(4096):
                pass
        writer.close()
    finally:
        await hook.stop()
