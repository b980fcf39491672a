"""Receiving updates by webhook: stamp on arrival, check the secret, queue for handling.

A body that is not an update (not JSON, not an object, nested too deeply) is
logged and answered with 200, so Telegram does not redeliver it again and again.
"""

from __future__ import annotations

import hmac
import json
import logging

from aiohttp import web
from telegram import Update

from .application import BotApplication
from .health import add_health_routes
from .receipts import ReceiptBook

logger = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookServer:
    """An HTTP server that hands Telegram's POSTs to the application's update queue."""

    def __init__(
        self,
        application: BotApplication,
        book: ReceiptBook,
        *,
        secret: str,
        host: str,
        port: int,
        path: str = "/telegram",
    ) -> None:
        self._application = application
        self._book = book
        self._secret = secret
        self._host = host
        self._port = port
        self.path = path
        self._runner: web.AppRunner | None = None
        self.bound_port: int | None = None

    async def _receive(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self._secret.encode()):
            return web.Response(status=403, text="forbidden")
        body = await request.read()
        update = self._parse(body)
        if update is None:
            # Answered with 200 all the same: Telegram would redeliver it with backoff,
            # and hold up the chat's later updates behind it.
            return web.Response(text="ignored: not an update")
        self._book.stamp([update])
        await self._application.update_queue.put(update)
        return web.Response(text="ok")

    def _parse(self, body: bytes) -> Update | None:
        """The update in a request body, or None (logged) if it holds none."""
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or type(data.get("update_id")) is not int:
                raise ValueError("not an update object")
            return Update.de_json(data, self._application.bot)
        except Exception as error:  # anything in a body we cannot read: JSON, shape, depth
            logger.warning(
                "webhook: ignored a body that is not an update (%d bytes, %s: %s): %r",
                len(body),
                type(error).__name__,
                str(error)[:200],
                body[:200],
            )
            return None

    async def start(self) -> None:
        """Start listening."""
        app = web.Application()
        app.router.add_post(self.path, self._receive)
        add_health_routes(app, self._application)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        addresses = self._runner.addresses
        self.bound_port = int(addresses[0][1]) if addresses else self._port
        logger.info("webhook listening on %s:%s%s", self._host, self.bound_port, self.path)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
