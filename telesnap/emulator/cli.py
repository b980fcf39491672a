"""``telesnap emulator``: serve the Bot API emulator until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from .config import EmulatorConfig, FloodLimits
from .server import EmulatorServer


async def serve(config: EmulatorConfig, host: str, port: int) -> None:
    """Run an emulator on ``host:port`` until cancelled."""
    server = EmulatorServer(config)
    url = await server.start(host, port)
    print(f"Bot API emulator on {url}/bot<token>/<method>; control API on {url}/_emulator/")
    print(f"bot token: {config.token}  (@{config.bot_username})", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(args: argparse.Namespace) -> int:
    """Serve with the options of ``args`` (host, port, no_flood_limits) until Ctrl-C."""
    config = EmulatorConfig(flood=FloodLimits(enabled=not args.no_flood_limits))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.host, args.port))
    return 0
