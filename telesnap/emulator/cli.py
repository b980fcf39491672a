"""``telesnap emulator``: serve the Bot API emulator until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os

from .config import EmulatorConfig, FloodLimits
from .guard import KEY_HEADER, new_key
from .server import EmulatorServer

KEY_VARIABLE = "TELESNAP_EMULATOR_KEY"
"""The run's key, when a test harness chooses it (otherwise a random one)."""


async def serve(config: EmulatorConfig, host: str, port: int) -> None:
    """Run an emulator on ``host:port`` until cancelled."""
    server = EmulatorServer(config)
    url = await server.start(host, port)
    print(f"Bot API emulator on {url}/bot<token>/<method>; control API on {url}/_emulator/")
    print(f"  the page and the control API need this run's key: {server.page_url}")
    print(f"  (tests send it as the {KEY_HEADER} header)")
    print(f"bot token: {config.token}  (@{config.bot_username})", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(args: argparse.Namespace) -> int:
    """Serve with the options of ``args`` (host, port, no_flood_limits) until Ctrl-C."""
    config = EmulatorConfig(
        flood=FloodLimits(enabled=not args.no_flood_limits),
        access_key=os.environ.get(KEY_VARIABLE) or new_key(),
        public_webhooks=args.public_webhooks,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.host, args.port))
    return 0
