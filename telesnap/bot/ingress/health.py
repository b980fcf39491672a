"""``/health`` and ``/ready`` on the webhook listener, for a reverse proxy or an orchestrator.

``/ready`` is 503 unless the database, the Bot API and (on PostgreSQL) the coordination answer
within :data:`READY_TIMEOUT_S`. Its reasons go to loopback callers only, since a reason can
name a host or a driver's error; an answer is kept for :data:`READY_CACHE_S`, so a flood of
``/ready`` costs one probe per period.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from ...support.retry import short_cause
from .redaction import redact

__all__ = [
    "HEALTH_PATH",
    "READY_CACHE_S",
    "READY_PATH",
    "READY_TIMEOUT_S",
    "Readiness",
    "add_health_routes",
]

logger = logging.getLogger(__name__)

HEALTH_PATH = "/health"
READY_PATH = "/ready"
READY_TIMEOUT_S = 2.0
"""How long each readiness probe may take before it counts as failed."""
READY_CACHE_S = 1.5
"""How long one probe's answer serves the ``/ready`` requests that follow it."""

Probe = Callable[[], Awaitable[object]]
"""A check that returns when its part answers and raises when it does not."""


@dataclass
class Readiness:
    """The checks ``/ready`` runs: the database, the Bot API, the coordination; each timed out."""

    database: Probe
    bot_api: Probe
    coordination: Probe | None = None
    """The coordination connection (None: one process needs none)."""
    timeout_s: float = READY_TIMEOUT_S
    cache_s: float = READY_CACHE_S
    clock: Callable[[], float] = time.monotonic
    _last_problems: list[str] = field(default_factory=list, init=False)
    _probed_at: float | None = field(default=None, init=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    async def problems(self) -> list[str]:
        """What keeps this worker from handling updates ([] when it is ready).

        A probe less than ``cache_s`` old is answered again; requests during a probe wait for it.
        """
        async with self._lock:
            if self._probed_at is None or self.clock() - self._probed_at >= self.cache_s:
                await self._probe()
                self._probed_at = self.clock()
            return list(self._last_problems)

    async def _probe(self) -> None:
        checks = {"database": self.database, "bot api": self.bot_api}
        if self.coordination is not None:
            checks["coordination"] = self.coordination
        results = await asyncio.gather(*(self._check(probe) for probe in checks.values()))
        found = [
            f"{name}: {result}" for name, result in zip(checks, results, strict=True) if result
        ]
        if found != self._last_problems:
            if found:
                logger.warning("not ready: %s", "; ".join(found))
            else:
                logger.info("ready again")
            self._last_problems = found

    async def _check(self, probe: Probe) -> str | None:
        try:
            async with asyncio.timeout(self.timeout_s):
                await probe()
        except TimeoutError:
            return f"no answer within {self.timeout_s:g} s"
        except Exception as error:  # any failure of the probe is the answer we report
            return redact(short_cause(error)[:200])
        return None


def add_health_routes(
    app: web.Application,
    readiness_of: Callable[[], Readiness | None],
    taking_updates: Callable[[], bool] = lambda: True,
) -> None:
    """Add ``GET /health`` and ``GET /ready`` (running ``readiness_of()``'s checks) to ``app``.

    ``/ready`` is 503 too while the worker does not take updates (resuming, or draining).
    """

    async def health(_request: web.Request) -> web.Response:
        return web.json_response({"alive": True})

    async def ready(request: web.Request) -> web.Response:
        readiness = readiness_of()
        if not taking_updates():
            problems = ["not taking updates: starting, or stopping"]
        elif readiness is None:
            logger.error("not ready: no readiness checks were installed")
            problems = ["the readiness checks are not installed"]
        else:
            problems = await readiness.problems()
        if not problems:
            return web.json_response({"ready": True})
        if not _is_loopback(request.remote):
            return web.json_response({"ready": False}, status=503)
        return web.json_response({"ready": False, "problems": problems}, status=503)

    app.router.add_get(HEALTH_PATH, health)
    app.router.add_get(READY_PATH, ready)


def _is_loopback(address: str | None) -> bool:
    """Whether a request came from this machine (an unknown address does not count)."""
    if not address:
        return False
    try:
        parsed = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped.is_loopback
    return parsed.is_loopback
