"""The webhook answers what it cannot read with a 2xx (after logging it), never a 500."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from telesnap.bot.callbacks import CallbackSigner
from telesnap.bot.receipts import ReceiptBook
from telesnap.bot.webhook import SECRET_HEADER, WebhookServer

SECRET = "s3cret"
DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"update_id": 9, "message": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001


@dataclass
class QueueOnly:
    """What the server uses of the Application: its bot and its update queue."""

    bot: Any = None
    update_queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)


@pytest.fixture
async def server() -> AsyncIterator[tuple[WebhookServer, QueueOnly]]:
    application = QueueOnly()
    book = ReceiptBook(CallbackSigner.for_token("123:secret"))
    hook = WebhookServer(
        application,  # type: ignore[arg-type]
        book,
        secret=SECRET,
        host="127.0.0.1",
        port=0,
    )
    await hook.start()
    try:
        yield hook, application
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
    server: tuple[WebhookServer, QueueOnly], body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    hook, application = server
    with caplog.at_level(logging.WARNING, logger="telesnap.bot.webhook"):
        status = await post(hook, body)
    assert status == 200
    assert application.update_queue.empty()
    assert any("not an update" in record.getMessage() for record in caplog.records)


async def test_an_update_is_queued(server: tuple[WebhookServer, QueueOnly]) -> None:
    hook, application = server
    assert await post(hook, json.dumps({"update_id": 5}).encode()) == 200
    update = application.update_queue.get_nowait()
    assert update.update_id == 5
