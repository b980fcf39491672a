"""The aiohttp request backend: what reaches the server, and how failures map."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from telegram import InputFile
from telegram.error import NetworkError, TimedOut
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from telesnap.bot.ingress.transport import AiohttpRequest


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, list[dict[str, object]], asyncio.Event]]:
    seen: list[dict[str, object]] = []
    never = asyncio.Event()

    async def record(request: web.Request) -> web.Response:
        form = await request.post()
        fields: dict[str, object] = {}
        for key, value in form.items():
            fields[key] = value.file.read() if isinstance(value, web.FileField) else value
        seen.append({"path": request.path, **fields})
        return web.json_response({"ok": True, "result": True})

    async def hang(request: web.Request) -> web.Response:
        await never.wait()
        return web.Response()

    app = web.Application()
    app.router.add_post("/record", record)
    app.router.add_post("/hang", hang)

    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(request.path)

    app.router.add_post("/bot{token}/getMe", loop)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", seen, never
    finally:
        never.set()
        await runner.cleanup()


async def test_form_fields_and_uploads_reach_the_server(
    server: tuple[str, list[dict[str, object]], asyncio.Event],
) -> None:
    url, seen, _ = server
    request = AiohttpRequest()
    await request.initialize()
    try:
        plain = RequestData(
            [RequestParameter.from_input("chat_id", -42), RequestParameter.from_input("text", "7♣")]
        )
        status, body = await request.do_request(f"{url}/record", "POST", plain)
        upload = InputFile(b"PNGDATA", filename="chart.png")
        with_file = RequestData(
            [
                RequestParameter.from_input("chat_id", -42),
                RequestParameter.from_input("photo", upload),
            ]
        )
        await request.do_request(f"{url}/record", "POST", with_file)
    finally:
        await request.shutdown()
    assert status == 200
    assert b'"ok": true' in body
    assert seen[0] == {"path": "/record", "chat_id": "-42", "text": "7♣"}
    assert seen[1]["chat_id"] == "-42"
    assert b"PNGDATA" in {value for value in seen[1].values() if isinstance(value, bytes)}


async def test_a_read_timeout_is_timed_out(
    server: tuple[str, list[dict[str, object]], asyncio.Event],
) -> None:
    url, _, _ = server
    request = AiohttpRequest()
    await request.initialize()
    try:
        with pytest.raises(TimedOut):
            await request.do_request(f"{url}/hang", "POST", None, read_timeout=0.05)
    finally:
        await request.shutdown()


async def test_an_unreachable_server_is_a_network_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    request = AiohttpRequest()
    await request.initialize()
    try:
        with pytest.raises(NetworkError):
            await request.do_request(f"http://127.0.0.1:{port}/", "POST", None)
    finally:
        await request.shutdown()


TOKEN = "123456:AAsecret-PART_of-the-token-0123456789"


async def test_an_error_text_never_holds_the_token(
    server: tuple[str, list[dict[str, object]], asyncio.Event],
) -> None:
    url, _, _ = server
    request = AiohttpRequest()
    await request.initialize()
    try:
        with pytest.raises(NetworkError) as raised:  # aiohttp's TooManyRedirects prints the URL
            await request.do_request(f"{url}/bot{TOKEN}/getMe", "POST", None)
    finally:
        await request.shutdown()
    assert "TooManyRedirects" in raised.value.message
    assert "AAsecret" not in raised.value.message
    assert "/bot123456:***/getMe" in raised.value.message
