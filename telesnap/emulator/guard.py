"""Who may use the page and the control API: the holder of the run's key, on this machine's address.

A browser on the operator's machine can be led by any web site to the
emulator's port. Three checks keep such requests out:

- the **key**: a random value made for each run and printed in the page's
  address (``/?k=KEY``). The first load of the page sets it as a cookie, which
  the page's scripts, pictures and live feed then carry; tests send it as the
  ``X-Telesnap-Key`` header or the ``k`` query parameter. The bot's own
  ``/bot<token>/`` and ``/file/bot<token>/`` answer without it, as Telegram's do.
- the **Host**: an IP address or ``localhost`` (or the name the server listens
  on) with the server's port, never another name (DNS rebinding).
- the **Origin**, when a browser sends one: the page's own (a cross-site request).

A page an earlier run served (its cookie holds that run's key) has its live feed
opened and closed at once with :data:`EARLIER_KEY_CLOSE_CODE`, so it can say so.

>>> is_loopback_host("127.0.0.5"), is_loopback_host("localhost"), is_loopback_host("10.0.0.1")
(True, True, False)
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from yarl import URL

logger = logging.getLogger(__name__)

KEY_PARAMETER = "k"
KEY_HEADER = "X-Telesnap-Key"
BOT_PATH_PREFIXES = ("/bot", "/file/bot")
LIVE_FEED_PATH = "/_emulator/live"
EARLIER_KEY_CLOSE_CODE = 4403
"""The live feed's close code for a page an earlier run served (its cookie holds that run's key).

The socket opens, then closes with this code: a page can read a close code, where a refused
handshake tells it nothing, so a tab left open across a restart says so instead of retrying.
"""
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})


def new_key() -> str:
    """A fresh key for one run (24 random bytes, URL-safe)."""
    return secrets.token_urlsafe(24)


def is_loopback_host(name: str) -> bool:
    """Whether ``name`` is this machine: ``localhost``, ``127.0.0.0/8`` or ``::1``."""
    if name.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _strip_brackets(name: str) -> str:
    return name.strip("[]").lower()


class AccessGuard:
    """The key of this run and the address the server listens on, checked on every request."""

    def __init__(self, key: str | None) -> None:
        self.key = key
        self.cookie_name = "telesnap_key"
        self._bound_host: str | None = None
        self._port: int | None = None

    def listening_on(self, host: str, port: int) -> None:
        """The address the server listens on (known once it has started)."""
        self._bound_host = _strip_brackets(host)
        self._port = port
        # A cookie is shared by every port of a host: one per port keeps two sandboxes apart.
        self.cookie_name = f"telesnap_key_{port}"

    def host_refusal(self, request: web.Request) -> str | None:
        """Why the request's Host or Origin is not this server's, or ``None`` when it is."""
        if self._port is None:
            return "the server is still starting"
        try:
            host = URL(f"http://{request.host}")
        except ValueError:
            return f"Host {request.host!r} is not this server's address"
        name = _strip_brackets(host.host or "")
        allowed = (
            is_loopback_host(name)
            or name == self._bound_host
            or (self._bound_host in WILDCARD_HOSTS and _is_ip_address(name))
        )
        if not allowed or host.port != self._port:
            return (
                f"Host {request.host!r} is not this server's address "
                f"(use http://127.0.0.1:{self._port}/ or the address it printed)"
            )
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"http://{request.host}":
            return f"requests from {origin} are refused (only the page itself may call)"
        return None

    def has_key(self, request: web.Request) -> bool:
        """Whether the request carries this run's key (query, header or cookie), if it needs one."""
        if self.key is None:
            return True
        offered = (
            request.query.get(KEY_PARAMETER)
            or request.headers.get(KEY_HEADER)
            or request.cookies.get(self.cookie_name)
            or ""
        )
        return hmac.compare_digest(offered.encode(), self.key.encode())

    def middleware(self) -> Middleware:
        """The aiohttp middleware that refuses with 403 what fails a check."""

        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            refusal = self.host_refusal(request)
            needs_key = not request.path.startswith(BOT_PATH_PREFIXES)
            if refusal is None and needs_key and not self.has_key(request):
                if request.path == LIVE_FEED_PATH and self.cookie_name in request.cookies:
                    return await _close_an_earlier_runs_feed(request)
                refusal = (
                    "this needs the key of this run: open the address the sandbox "
                    f"or emulator printed at start (it ends in /?{KEY_PARAMETER}=...)"
                )
            if refusal is not None:
                logger.warning("refused %s %s: %s", request.method, request.path, refusal)
                return web.Response(status=403, text=f"Forbidden: {refusal}\n")
            if self.key is not None and KEY_PARAMETER in request.query:
                kept = [(n, v) for n, v in request.query.items() if n != KEY_PARAMETER]
                request = request.clone(rel_url=request.rel_url.with_query(kept))
                response = await handler(request)
                if not response.prepared:  # a live feed's socket has sent its headers already
                    response.set_cookie(
                        self.cookie_name, self.key, httponly=True, samesite="Strict", path="/"
                    )
                return response
            return await handler(request)

        return guard


async def _close_an_earlier_runs_feed(request: web.Request) -> web.WebSocketResponse:
    """Open the live feed of a page an earlier run served, only to close it saying why."""
    logger.warning(
        "refused %s %s: the page holds an earlier run's key", request.method, request.path
    )
    socket = web.WebSocketResponse()
    await socket.prepare(request)
    await socket.close(code=EARLIER_KEY_CLOSE_CODE, message=b"the page holds an earlier run's key")
    return socket
