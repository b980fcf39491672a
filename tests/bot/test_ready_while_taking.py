"""``/ready`` is 200 only while a worker takes updates: not while it resumes, nor drains."""

from __future__ import annotations

from typing import Any, cast

import aiohttp

from telesnap.bot.ingress.health import Readiness
from telesnap.bot.ingress.webhook import WebhookServer


async def _answers() -> None:
    """A probe whose part answers."""


async def test_ready_only_while_the_worker_takes_updates() -> None:
    server = WebhookServer(
        cast(Any, None),
        cast(Any, None),
        secret="s" * 40,
        host="127.0.0.1",
        port=0,
        taking_updates=False,
        readiness=Readiness(_answers, _answers),
    )
    await server.start()
    url = f"http://127.0.0.1:{server.bound_port}"
    try:
        async with aiohttp.ClientSession() as session:

            async def ready() -> int:
                async with session.get(f"{url}/ready") as answer:
                    return answer.status

            async def update() -> int:
                async with session.post(f"{url}/telegram", data=b"{}") as answer:
                    return answer.status

            assert (await ready(), await update()) == (503, 503), "resuming"
            server.take_updates()
            assert await ready() == 200
            server.drain()
            assert (await ready(), await update()) == (503, 503), "draining"
    finally:
        await server.stop()
