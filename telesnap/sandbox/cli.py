"""``telesnap sandbox``: run the sandbox until Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
import webbrowser
from pathlib import Path

from ..config import (
    LOG_LEVEL_VARIABLE,
    SANDBOX_PORT_VARIABLE,
    ConfigError,
    Settings,
    load_settings,
    mask_password,
    normalize_database_url,
)
from ..storage.database import describe_database
from . import roster
from .app import DEFAULT_DATABASE_FILE, DEFAULT_PORT, Sandbox, SandboxOptions, sqlite_file

logger = logging.getLogger(__name__)
PORT_VARIABLE = SANDBOX_PORT_VARIABLE
ROSTER_FILE = "telesnap-sandbox.json"
"""Where the chats are kept when the games are not in a SQLite file."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def sandbox_settings() -> Settings:
    """The settings the sandbox reads (``TELESNAP_SANDBOX_PORT``, the shuffle seed, logging)."""
    return load_settings(require_token=False, defaults={LOG_LEVEL_VARIABLE: "WARNING"})


def options_from(args: argparse.Namespace, settings: Settings | None = None) -> SandboxOptions:
    """The options of the command line (``--fresh`` removes the database and chats first).

    What the command line leaves out comes from ``settings`` (default: :func:`sandbox_settings`).
    """
    if settings is None:
        settings = sandbox_settings()
    database_url = normalize_database_url(
        args.database_url or f"sqlite+aiosqlite:///{DEFAULT_DATABASE_FILE}", "--database-url"
    )
    database_file = sqlite_file(database_url)
    if database_file is not None and not database_file.parent.is_dir():
        raise ConfigError(
            f"cannot open the SQLite file {database_file}: "
            f"the folder {database_file.parent} does not exist"
        )
    roster_file = (
        Path(ROSTER_FILE)
        if database_file is None
        else database_file.with_name(database_file.name + ".sandbox.json")
    )
    if args.fresh:
        if database_file is None:
            raise ConfigError("--fresh only removes a SQLite database file")
        if database_file.exists() and not roster.made_database(roster_file):
            raise ConfigError(
                f"--fresh removes only a database the sandbox created, and {database_file} "
                f"is not one ({roster_file.name} beside it does not say so); nothing was removed"
            )
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
        port = DEFAULT_PORT if settings.sandbox_port is None else settings.sandbox_port
    return SandboxOptions(
        database_url=database_url,
        host=args.host,
        port=port,
        flood_limits=not args.no_flood_limits,
        shuffle_seed=settings.shuffle_seed,
        roster_file=roster_file,
    )


def start_lines(url: str, options: SandboxOptions) -> list[str]:
    """What the sandbox says when it is up: the page, where the games are, who can reach it."""
    file = sqlite_file(options.database_url)
    kept = (
        f"{file} (--fresh starts over)"
        if file is not None
        else describe_database(options.database_url)
    )
    lines = [
        f"telesnap sandbox: open {url} in a browser",
        f"  games are kept in {kept}",
        "  replay one: telesnap replay --game ID --database-url "
        + mask_password(options.database_url),
    ]
    if options.host in LOOPBACK_HOSTS:
        lines.append(f"  listening on {options.host} only: other machines cannot reach it (--host)")
    else:
        lines.append(f"  listening on {options.host}: anyone who can reach this machine can use it")
    lines.append("  Ctrl-C stops it")
    return lines


async def serve(sandbox: Sandbox, *, open_browser: bool) -> None:
    """Start the sandbox, say where it is, and run until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    roster_file = sandbox.options.roster_file
    had_roster = roster_file is None or roster_file.exists()
    url = ""
    try:
        url = await sandbox.start()
        print("\n".join(start_lines(url, sandbox.options)), flush=True)
        if open_browser:
            webbrowser.open(url)
        await stop.wait()
    finally:
        await sandbox.stop()
        if url:
            print("telesnap sandbox: stopped", flush=True)
        elif not had_roster:
            _forget_roster(sandbox.options)


def _forget_roster(options: SandboxOptions) -> None:
    """Remove the chats a start that failed saved, unless they mark a database it created."""
    database_file = sqlite_file(options.database_url)
    if options.roster_file is not None and (database_file is None or not database_file.exists()):
        options.roster_file.unlink(missing_ok=True)


def main(args: argparse.Namespace) -> int:
    """``telesnap sandbox``: run until interrupted.

    A setting it cannot use exits with 2; what the machine refuses (a port in use, a host with
    no address) with 1.
    """
    try:
        settings = sandbox_settings()
        logging.basicConfig(
            level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        sandbox = Sandbox(options_from(args, settings))
        asyncio.run(serve(sandbox, open_browser=args.open))
    except ConfigError as error:
        print(f"telesnap sandbox: {error}", file=sys.stderr)
        return 2
    except socket.gaierror as error:
        print(
            f"telesnap sandbox: cannot listen on --host {args.host}: {error.strerror}",
            file=sys.stderr,
        )
        return 1
    except OSError as error:
        print(f"telesnap sandbox: {error}", file=sys.stderr)
        return 1
    return 0
