"""``/health`` and ``/ready`` on the webhook listener, for a reverse proxy or an orchestrator.

- ``GET /health`` (liveness): 200 whenever the process answers HTTP at all.
- ``GET /ready`` (readiness): 200 when the database answers a query and the Bot
  API answers ``getMe``, each within :data:`READY_TIMEOUT_S`; otherwise 503 with
  the reasons, e.g. ``{"ready": false, "problems": ["database: no answer within
  2 s"]}``. A change in what is wrong is logged once, not on every probe.

The wiring (``telesnap.app``) hands the two probes over with
:func:`install_readiness`; the webhook server adds the routes with
:func:`add_health_routes`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from .application import BotApplication

__all__ = [
    "HEALTH_PATH",
    "READY_PATH",
    "READY_TIMEOUT_S",
    "Readiness",
    "add_health_routes",
    "install_readiness",
]

logger = logging.getLogger(__name__)

HEALTH_PATH = "/health"
READY_PATH = "/ready"
READY_TIMEOUT_S = 2.0
"""How long each readiness probe may take before it counts as failed."""
_READINESS_KEY = "telesnap.readiness"

Probe = Callable[[], Awaitable[object]]
"""A check that returns when its part answers and raises when it does not."""


@dataclass
class Readiness:
    """The checks ``/ready`` runs: the database and the Bot API, each with a timeout."""

    database: Probe
    bot_api: Probe
    timeout_s: float = READY_TIMEOUT_S
    _last_problems: list[str] = field(default_factory=list, init=False)

    async def problems(self) -> list[str]:
        """What keeps this worker from handling updates now ([] when it is ready)."""
        checks = {"database": self.database, "bot api": self.bot_api}
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
        return found

    async def _check(self, probe: Probe) -> str | None:
        try:
            async with asyncio.timeout(self.timeout_s):
                await probe()
        except TimeoutError:
            return f"no answer within {self.timeout_s:g} s"
        except Exception as error:  # any failure of the probe is the answer we report
            return f"{type(error).__name__}: {str(error)[:200]}"
        return None


def install_readiness(application: BotApplication, readiness: Readiness) -> None:
    """Give the application the checks its ``/ready`` endpoint runs."""
    application.bot_data[_READINESS_KEY] = readiness


def add_health_routes(app: web.Application, application: BotApplication) -> None:
    """Add ``GET /health`` and ``GET /ready`` to the webhook listener's ``app``."""

    async def health(_request: web.Request) -> web.Response:
        return web.json_response({"alive": True})

    async def ready(_request: web.Request) -> web.Response:
        readiness = application.bot_data.get(_READINESS_KEY)
        if not isinstance(readiness, Readiness):
            logger.error("not ready: no readiness checks were installed")
            return web.json_response(
                {"ready": False, "problems": ["the readiness checks are not installed"]},
                status=503,
            )
        problems = await readiness.problems()
        if problems:
            return web.json_response({"ready": False, "problems": problems}, status=503)
        return web.json_response({"ready": True})

    app.router.add_get(HEALTH_PATH, health)
    app.router.add_get(READY_PATH, ready)
