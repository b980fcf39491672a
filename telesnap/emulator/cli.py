"""``telesnap emulator``: serve the Bot API emulator until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sys
from pathlib import Path

from .config import EmulatorConfig, FloodLimits
from .guard import KEY_HEADER, new_key
from .server import EmulatorServer

KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,256}")
"""A key a harness chooses (``--key-file``): URL-safe, long enough not to be guessed."""


def read_key(path: Path) -> str:
    """The key in ``path`` (one line); ``ValueError`` saying why when it cannot be used."""
    try:
        key = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ValueError(f"cannot read --key-file {path}: {error.strerror}") from None
    if not KEY_PATTERN.fullmatch(key):
        raise ValueError(f"--key-file {path}: the key must be 16-256 of A-Z a-z 0-9 _ -")
    return key


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
    """Serve with the options of ``args`` until Ctrl-C; 2 when the key file cannot be used."""
    try:
        key = new_key() if args.key_file is None else read_key(args.key_file)
    except ValueError as error:
        print(f"telesnap emulator: {error}", file=sys.stderr)
        return 2
    config = EmulatorConfig(
        flood=FloodLimits(enabled=not args.no_flood_limits),
        access_key=key,
        public_webhooks=args.public_webhooks,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.host, args.port))
    return 0
