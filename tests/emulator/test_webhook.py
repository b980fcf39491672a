"""Webhook delivery: secret header, retries with backoff, per-chat order, 409 on getUpdates."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from telesnap.emulator.testing import RunningEmulator

from .raw import RawBotApi
from .sample_bot import SampleBot


class Receiver:
    """A webhook endpoint that fails its first ``failures`` requests with 500."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.received: list[tuple[str | None, dict[str, Any]]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append(
            (request.headers.get("X-Telegram-Bot-Api-Secret-Token"), await request.json())
        )
        if self.failures:
            self.failures -= 1
            return web.Response(status=500)
        return web.Response(text="ok")


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    receiver = Receiver(failures=2)
    app = web.Application()
    app.router.add_post("/hook", receiver.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    receiver.url = f"http://{host}:{port}/hook"
    yield receiver
    await runner.cleanup()


async def test_webhook_delivery_retries_in_order_with_the_secret(
    api: RawBotApi, emulator: RunningEmulator, receiver: Receiver
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    await api.ok("setWebhook", url=receiver.url, secret_token="s3cret")
    status, description = await api.error("getUpdates")
    assert status == 409
    assert description.startswith("Conflict: can't use getUpdates method while webhook is active")

    await client.send_text(chat["id"], alice["id"], "first")
    await client.send_text(chat["id"], alice["id"], "second")
    await client.wait_until_idle()

    texts = [(secret, body["message"]["text"]) for secret, body in receiver.received]
    assert texts == [("s3cret", "first")] * 3 + [("s3cret", "second")]
    first, second = await client.updates()
    assert [d.via for d in first.deliveries] == ["webhook"] * 3
    assert first.confirmed
    assert second.confirmed
    assert second.deliveries[0].at >= first.deliveries[-1].at
    info = await api.ok("getWebhookInfo")
    assert info["url"] == receiver.url
    assert info["pending_update_count"] == 0
    assert "500" in info["last_error_message"]


async def test_delete_webhook_can_drop_pending_updates(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    await client.pause_delivery()
    await api.ok("setWebhook", url="http://127.0.0.1:9/nowhere")
    await client.send_text(chat["id"], alice["id"], "lost")
    await api.ok("deleteWebhook", drop_pending_updates=True)
    await client.resume_delivery()
    assert await api.ok("getUpdates", timeout=0) == []
    assert (await api.ok("getWebhookInfo"))["url"] == ""


@pytest.mark.parametrize(
    "refused",
    [
        {"url": "ftp://127.0.0.1/hook"},
        {"url": "http://127.0.0.1:9/hook", "secret_token": "not allowed!"},
    ],
)
async def test_a_refused_webhook_drops_nothing(
    api: RawBotApi, emulator: RunningEmulator, refused: dict[str, str]
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    await client.send_text(chat["id"], alice["id"], "kept")
    status, _ = await api.error("setWebhook", drop_pending_updates=True, **refused)
    assert status == 400
    assert [u["message"]["text"] for u in await api.ok("getUpdates", timeout=0)] == ["kept"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_ptb_bot_in_webhook_mode(emulator: RunningEmulator) -> None:
    bot = SampleBot(emulator)
    port = free_port()
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    async with bot.application:
        await bot.application.start()
        assert bot.application.updater is not None
        await bot.application.updater.start_webhook(
            listen="127.0.0.1",
            port=port,
            url_path="hook",
            webhook_url=f"http://127.0.0.1:{port}/hook",
            secret_token="s3cret",
        )
        await client.send_command(chat["id"], alice["id"], "start")
        reply = await client.wait_for_message(chat["id"])
        await bot.application.updater.stop()
        await bot.application.stop()

    assert reply.text == "Hello Alice <3"
    (update,) = await client.updates()
    assert update.first_delivery is not None
    assert update.first_delivery.via == "webhook"
