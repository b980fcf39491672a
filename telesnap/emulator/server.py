"""The HTTP server: ``/bot<token>/<method>`` for the bot, ``/_emulator/...`` for tests and the page.

Requests are read the way python-telegram-bot and other clients send them:
query strings, form-encoded or multipart bodies (complex values JSON-encoded,
uploads as file parts or ``attach://`` references) and JSON bodies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from .config import EmulatorConfig
from .control import EMULATOR_KEY, add_control_routes
from .core import DropConnectionError, Emulator
from .errors import ApiError, bad_request
from .guard import KEY_PARAMETER, AccessGuard
from .live import add_live_routes
from .spec import UploadedFile

MAX_UPLOAD_BYTES = 50 * 1024 * 1024


async def read_params(request: web.Request) -> dict[str, Any]:
    """Return every parameter of a Bot API request, files as :class:`UploadedFile`."""
    params: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            params.update(_json_object(await request.text()))
        else:
            form = await request.post()
            for name, value in form.items():
                if isinstance(value, web.FileField):
                    content = value.file.read()
                    params[name] = UploadedFile(
                        name, value.filename, len(content), value.content_type, content
                    )
                else:
                    params[name] = value
    for name, value in list(params.items()):
        if isinstance(value, str) and value.startswith("attach://"):
            attached = params.get(value.removeprefix("attach://"))
            if isinstance(attached, UploadedFile):
                params[name] = attached
    return params


def _json_object(text: str) -> dict[str, Any]:
    """The parameters of a JSON body, which Telegram takes only as one object."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as error:
        raise bad_request(f"can't parse JSON object: {error.msg}") from None
    if not isinstance(body, dict):
        raise bad_request("JSON object expected")
    return body


async def handle_bot_call(request: web.Request) -> web.StreamResponse:
    """Answer one Bot API call as Telegram would (an unreadable body too, as a violation)."""
    emulator = request.app[EMULATOR_KEY]
    unreadable = None
    try:
        params = await read_params(request)
    except ApiError as error:
        params, unreadable = dict(request.query), error
    try:
        body = await emulator.handle_call(
            request.match_info["token"], request.match_info["method"], params, unreadable
        )
    except DropConnectionError:
        if request.transport is not None:
            request.transport.close()
        return web.Response(status=504)
    return web.json_response(body, status=body.get("error_code", 200))


AppExtension = Callable[[web.Application], None]
"""Adds routes of its own to the emulator's application (the sandbox's, for one)."""


def build_app(
    emulator: Emulator, guard: AccessGuard, extension: AppExtension | None = None
) -> web.Application:
    """Return the aiohttp application serving ``emulator`` (and what ``extension`` adds)."""
    app = web.Application(client_max_size=MAX_UPLOAD_BYTES, middlewares=[guard.middleware()])
    app[EMULATOR_KEY] = emulator
    app.router.add_route("*", "/bot{token}/{method}", handle_bot_call)
    add_control_routes(app)
    add_live_routes(app)
    if extension is not None:
        extension(app)
    return app


class EmulatorServer:
    """An emulator listening on a host and port, started and stopped in the running loop."""

    def __init__(
        self, config: EmulatorConfig | None = None, *, extension: AppExtension | None = None
    ) -> None:
        self.emulator = Emulator(config)
        self.guard = AccessGuard(self.emulator.config.access_key)
        self._extension = extension
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Start listening (port 0 picks a free one) and return the base URL."""
        runner = web.AppRunner(
            build_app(self.emulator, self.guard, self._extension),
            handler_cancellation=True,
            shutdown_timeout=1.0,
            access_log=None,
        )
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        self._runner = runner
        address = runner.addresses[0]
        self.guard.listening_on(host, address[1])
        self.url = f"http://{address[0]}:{address[1]}"
        return self.url

    @property
    def page_url(self) -> str:
        """The page's address with this run's key: what to open in a browser."""
        if self.guard.key is None:
            return f"{self.url}/"
        return f"{self.url}/?{KEY_PARAMETER}={self.guard.key}"

    async def stop(self) -> None:
        """Release waiting requests, stop deliveries and close the server."""
        await self.emulator.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
