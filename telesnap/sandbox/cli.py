"""``telesnap sandbox``: run the sandbox until Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import webbrowser
from pathlib import Path

from ..config import SHUFFLE_SEED_VARIABLE, ConfigError, normalize_database_url
from .app import DEFAULT_DATABASE_FILE, DEFAULT_PORT, Sandbox, SandboxOptions, sqlite_file

logger = logging.getLogger(__name__)
PORT_VARIABLE = "TELESNAP_SANDBOX_PORT"
ROSTER_FILE = "telesnap-sandbox.json"
"""Where the chats are kept when the games are not in a SQLite file."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def options_from(args: argparse.Namespace) -> SandboxOptions:
    """The options of the command line (``--fresh`` removes the database and chats first)."""
    database_url = normalize_database_url(
        args.database_url or f"sqlite+aiosqlite:///{DEFAULT_DATABASE_FILE}", "--database-url"
    )
    database_file = sqlite_file(database_url)
    roster_file = (
        Path(ROSTER_FILE)
        if database_file is None
        else database_file.with_name(database_file.name + ".sandbox.json")
    )
    if args.fresh:
        if database_file is None:
            raise ConfigError("--fresh only removes a SQLite database file")
        for path in (
            database_file,
            database_file.with_name(database_file.name + "-wal"),
            database_file.with_name(database_file.name + "-shm"),
            roster_file,
        ):
            if path.exists():
                path.unlink()
    port = args.port
    if port is None:
        port_text = os.environ.get(PORT_VARIABLE, "").strip() or str(DEFAULT_PORT)
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            raise ConfigError(f"{PORT_VARIABLE} must be a port number, not {port_text!r}")
        port = int(port_text)
    seed_text = os.environ.get(SHUFFLE_SEED_VARIABLE, "").strip()
    try:
        seed = int(seed_text) if seed_text else None
    except ValueError:
        raise ConfigError(f"{SHUFFLE_SEED_VARIABLE} must be a whole number") from None
    return SandboxOptions(
        database_url=database_url,
        host=args.host,
        port=port,
        flood_limits=not args.no_flood_limits,
        shuffle_seed=seed,
        roster_file=roster_file,
    )


async def serve(sandbox: Sandbox, *, open_browser: bool) -> None:
    """Start the sandbox, say where it is, and run until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    url = ""
    try:
        url = await sandbox.start()
        options = sandbox.options
        where = sqlite_file(options.database_url)
        print(f"telesnap sandbox: open {url} in a browser", flush=True)
        if where is not None:
            print(f"  games are kept in {where} (--fresh starts over)")
        if options.host in LOOPBACK_HOSTS:
            print(f"  listening on {options.host} only: other machines cannot reach it (--host)")
        else:
            print(f"  listening on {options.host}: anyone who can reach this machine can use it")
        print("  Ctrl-C stops it", flush=True)
        if open_browser:
            webbrowser.open(url)
        await stop.wait()
    finally:
        await sandbox.stop()
        if url:
            print("telesnap sandbox: stopped", flush=True)


def main(args: argparse.Namespace) -> int:
    """``telesnap sandbox``: run until interrupted; 2 on a bad option or a port it cannot use."""
    logging.basicConfig(
        level=os.environ.get("TELESNAP_LOG_LEVEL", "WARNING").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        sandbox = Sandbox(options_from(args))
        asyncio.run(serve(sandbox, open_browser=args.open))
    except ConfigError as error:
        print(f"telesnap sandbox: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(
            f"telesnap sandbox: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr
        )
        return 2
    return 0
