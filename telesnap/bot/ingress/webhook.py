"""Receiving updates by webhook: check the secret, stamp and store the update, then 200.

The 200 goes only once the update is committed in the inbox: a worker that dies before never
acknowledged it, and Telegram delivers it again. A body that is not an update gets 200 all the
same, so it is not redelivered again and again; a bot not taking updates (still resuming, or
draining) answers 503, so Telegram delivers again, or elsewhere. Oversized bodies (413;
updates are a few KiB) and idle connections are cut off, so clients cannot hold memory.
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from aiohttp import web
from telegram import Update

from ...support.retry import FailureRun, short_cause
from .application import BotApplication
from .health import Readiness, add_health_routes
from .intake import Intake
from .relevance import bot_username, wanted

logger = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY_BYTES = 64 * 1024
"""The largest body a POST may have (413 beyond)."""
KEEPALIVE_TIMEOUT_S = 15.0
"""How long an idle keep-alive connection stays open."""


class WebhookServer:
    """An HTTP server that stores Telegram's POSTs in the inbox before answering them."""

    def __init__(
        self,
        application: BotApplication,
        intake: Intake,
        *,
        secret: str,
        host: str,
        port: int,
        path: str = "/telegram",
        keepalive_timeout_s: float = KEEPALIVE_TIMEOUT_S,
        readiness: Readiness | None = None,
        taking_updates: bool = True,
    ) -> None:
        """Listen at ``host:port`` and ``path`` once started.

        ``taking_updates`` False: updates get 503 until :meth:`take_updates` (a start's resume
        goes first, or an update would overtake the calls a stop left in the inbox).
        """
        self._application = application
        self.readiness = readiness
        """What ``/ready`` checks (None: it answers 503, the checks are not installed)."""
        self._intake = intake
        self._store_failures = FailureRun(logger, "webhook: storing updates")
        self._taking = taking_updates
        self._secret = secret
        self._host = host
        self._port = port
        self.path = path
        self._keepalive_timeout_s = keepalive_timeout_s
        self._runner: web.AppRunner | None = None
        self.bound_port: int | None = None
        self.app = web.Application(client_max_size=MAX_BODY_BYTES)
        """The aiohttp application (routes may be added before :meth:`start`)."""
        self.app.router.add_post(self.path, self._receive)
        add_health_routes(self.app, lambda: self.readiness, lambda: self._taking)

    def take_updates(self) -> None:
        """Take updates from now on: the start is done."""
        self._taking = True

    def drain(self) -> None:
        """Refuse new updates from now on (503): the bot is stopping."""
        self._taking = False

    async def _receive(self, request: web.Request) -> web.Response:
        if not self._taking:
            return web.Response(status=503, text="not taking updates now: deliver again")
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self._secret.encode()):
            return web.Response(status=403, text="forbidden")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            logger.warning("webhook: refused a body above %d bytes (413)", MAX_BODY_BYTES)
            raise
        parsed = self._parse(body)
        if parsed is None:
            # Answered with 200 all the same: Telegram would redeliver it with backoff,
            # and hold up the chat's later updates behind it.
            return web.Response(text="ignored: not an update")
        update, data = parsed
        if not wanted(data, bot_username(self._application.bot)):
            return web.Response(text="ignored: not for this bot")  # not stored: see .relevance
        try:
            await self._intake.receive([update], [data])
        except Exception as error:
            self._store_failures.failed(
                error,
                "webhook: could not store update %d (%s); answered 500",
                update.update_id,
                short_cause(error),
            )
            return web.Response(status=500, text="not stored; deliver again")
        self._store_failures.succeeded()
        return web.Response(text="ok")

    def _parse(self, body: bytes) -> tuple[Update, dict[str, Any]] | None:
        """The update in a request body (and its JSON), or None (logged) if it holds none."""
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or type(data.get("update_id")) is not int:
                raise ValueError("not an update object")
            return Update.de_json(data, self._application.bot), data
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
        self._runner = web.AppRunner(
            self.app, access_log=None, keepalive_timeout=self._keepalive_timeout_s
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        try:
            await site.start()
        except OSError as error:  # its own words name an address tuple, not the option
            reason = error.strerror or str(error)
            raise OSError(
                f"cannot listen on {self._host}:{self._port} (--listen): {reason}"
            ) from None
        addresses = self._runner.addresses
        self.bound_port = int(addresses[0][1]) if addresses else self._port
        logger.info("webhook listening on %s:%s%s", self._host, self.bound_port, self.path)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
