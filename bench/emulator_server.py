"""The Bot API emulator of ``telesnap emulator``, plus two cheap waits for the benchmark.

Run: .venv/bin/python bench/emulator_server.py [--port P]   (flood limits are off)

The stock control API answers every read with a whole list (all toasts, a
chat's whole transcript), so polling it under benchmark load costs the
emulator time that grows with the run and steals CPU from the bot under test.
This server adds two long polls that look only at what a driver waits for:

- ``POST /_emulator/bench/toasts {"ids": [...], "timeout": s}``: returns when
  every listed press is answered: ``{"toasts": {id: {...}}, "done": bool}``.
- ``POST /_emulator/bench/board {"chat_id": c, "after": m, "timeout": s}``:
  returns the chat's newest live bot message once its id is above ``m``:
  ``{"message": {...} | null}``.

``GET /_emulator/bench/now`` gives the emulator's clock. Everything else is
the unchanged emulator.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from aiohttp import web

from telesnap.emulator.config import EmulatorConfig, FloodLimits
from telesnap.emulator.control import EMULATOR_KEY
from telesnap.emulator.core import Emulator
from telesnap.emulator.records import TranscriptMessage, to_json
from telesnap.emulator.server import EmulatorServer

MAX_WAIT_S = 30.0


def _newest_bot_message(emulator: Emulator, chat_id: int) -> TranscriptMessage | None:
    # Messages are kept in the order they were made, so the newest is near the end.
    for (message_chat_id, _), message in reversed(emulator.world.messages.items()):
        if message_chat_id == chat_id and message.is_from_bot and not message.deleted:
            return message
    return None


async def _toasts(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR_KEY]
    body = await request.json()
    ids: list[str] = body["ids"]
    timeout = min(float(body.get("timeout", 10.0)), MAX_WAIT_S)
    queries = emulator.callback_queries  # a press made with an offset appears when it fires

    def answered() -> bool:
        return all(i in queries and queries[i].answered_at is not None for i in ids)

    done = await emulator.changes.wait_until(answered, timeout)
    toasts = {i: to_json(queries[i]) for i in ids if i in queries}
    return web.json_response({"toasts": toasts, "done": done})


async def _board(request: web.Request) -> web.Response:
    emulator = request.app[EMULATOR_KEY]
    body = await request.json()
    chat_id, after = int(body["chat_id"]), int(body["after"])
    timeout = min(float(body.get("timeout", 10.0)), MAX_WAIT_S)
    found: list[TranscriptMessage] = []

    def newer() -> bool:
        message = _newest_bot_message(emulator, chat_id)
        if message is None or message.message_id <= after:
            return False
        found[:] = [message]
        return True

    await emulator.changes.wait_until(newer, timeout)
    message = to_json(found[0]) if found else None
    return web.json_response({"message": message})


async def _now(request: web.Request) -> web.Response:
    return web.json_response({"now": request.app[EMULATOR_KEY].clock()})


def add_bench_routes(app: web.Application) -> None:
    """The waits the bench's driver uses, beside the emulator's own routes."""
    app.router.add_route("POST", "/_emulator/bench/toasts", _toasts)
    app.router.add_route("POST", "/_emulator/bench/board", _board)
    app.router.add_route("GET", "/_emulator/bench/now", _now)


async def serve(port: int) -> None:
    # A benchmark's emulator, on loopback with no page: its control API needs no key.
    config = EmulatorConfig(flood=FloodLimits(enabled=False), access_key=None)
    server = EmulatorServer(config, extension=add_bench_routes)
    url = await server.start("127.0.0.1", port)
    print(f"emulator {url} token {server.emulator.config.token}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port))


if __name__ == "__main__":
    main()
