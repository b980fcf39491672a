"""The ``telesnap`` command line: every sub-command's arguments, parsed in one place.

Each sub-command's body is imported only when it runs, so ``telesnap simulate`` never loads
Telegram or the database.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import os
import select
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from ..bot.ingress.redaction import redact
from ..config import ConfigError, TokenRevokedError

DESCRIPTION = "Snap for Telegram group chats: the bot, and the tools around it."


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


def _player_count(text: str) -> int:
    from ..game import MAX_PLAYERS, MIN_PLAYERS

    value = _whole_number(text)
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(
            f"Snap needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {value}"
        )
    return value


def _non_negative_int(text: str) -> int:
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _port(text: str) -> int:
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, not {text!r}")
    return int(text)


def _host_and_port(text: str) -> str:
    """``HOST:PORT``; an IPv6 host may be in brackets (``[::1]:8443`` is ``::1:8443``)."""
    host, _, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"must be HOST:PORT with a port from 1 to 65535, not {text!r}"
        )
    return f"{host}:{port}"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line (``--help`` gives the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (--help lists the options)\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``telesnap`` command.

    >>> build_parser().parse_args(["simulate", "--players", "3"]).players
    3
    """
    parser = _Parser(prog="telesnap", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    simulate = commands.add_parser(
        "simulate", help="play whole games with simulated players and print a summary"
    )
    simulate.add_argument("--players", type=_player_count, default=4, help="players per game")
    simulate.add_argument("--games", type=_positive_int, default=100, help="games to play")
    simulate.add_argument(
        "--seed", type=int, default=0, help="random seed (same seed, same output)"
    )
    simulate.add_argument(
        "--tie-window", type=_non_negative_int, default=100, metavar="MS", help="tie window in ms"
    )
    simulate.add_argument("--json", action="store_true", help="print the summary as JSON")
    simulate.set_defaults(target="telesnap.cli.simulate:main")

    run = commands.add_parser(
        "run",
        help="run the bot (long polling, or a webhook with --webhook-url)",
        description="Run the bot. Settings come from TELESNAP_* environment variables "
        "(and a .env file): TELESNAP_TOKEN is required.",
    )
    run.add_argument("--webhook-url", help="public HTTPS URL Telegram should POST updates to")
    run.add_argument(
        "--listen",
        type=_host_and_port,
        metavar="HOST:PORT",
        help="with --webhook-url: where to listen (default: 127.0.0.1:8443)",
    )
    run.add_argument(
        "--webhook-secret-file",
        metavar="PATH",
        help="file holding the secret Telegram sends with every webhook POST, at least 32 "
        "characters (or set TELESNAP_WEBHOOK_SECRET or TELESNAP_WEBHOOK_SECRET_FILE)",
    )
    run.add_argument(
        "--no-resume",
        action="store_true",
        help="never decide open races or post running games again at start, even when "
        "no other worker is running (a worker that finds others running never does)",
    )
    run.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="with --webhook-url: run N worker processes on the ports from --listen's on "
        "(for a reverse proxy in front), restarting any that dies; SIGHUP restarts them "
        "one at a time",
    )
    run.set_defaults(target="telesnap.cli.run:run_command")

    database = commands.add_parser("db", help="manage the database")
    database_commands = database.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    upgrade = database_commands.add_parser("upgrade", help="apply every migration")
    upgrade.set_defaults(target="telesnap.cli.run:upgrade_command")

    replay = commands.add_parser(
        "replay", help="rebuild a game from its history and check it against what is stored"
    )
    replay_source = replay.add_mutually_exclusive_group(required=True)
    replay_source.add_argument("file", nargs="?", help="a document sent by /replay")
    replay_source.add_argument("--game", type=_positive_int, help="a game id in the database")
    replay.add_argument("--database-url", help="default: TELESNAP_DATABASE_URL")
    replay.set_defaults(target="telesnap.cli.replay:replay_command")

    export = commands.add_parser("export", help="print a chat's games and stats as JSON")
    export.add_argument("--chat", type=int, required=True, help="the chat id")
    export.add_argument("--output", help="write to this file instead of printing (-: print)")
    export.add_argument("--database-url", help="default: TELESNAP_DATABASE_URL")
    export.set_defaults(target="telesnap.cli.replay:export_command")

    sandbox = commands.add_parser(
        "sandbox",
        help="try the bot without Telegram: a group chat in the browser, with the real bot",
        description="Run the Bot API emulator, the real bot against it, and a web page "
        "showing a Telegram group (several people at once, robots, the race timeline).",
    )
    sandbox.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: this machine only)"
    )
    sandbox.add_argument(
        "--port", type=_port, help="port of the page (default: TELESNAP_SANDBOX_PORT, else 8080)"
    )
    sandbox.add_argument(
        "--database-url",
        help="where the games are kept (default: sqlite+aiosqlite:///telesnap-sandbox.db)",
    )
    sandbox.add_argument(
        "--fresh", action="store_true", help="start over: remove the sandbox's games and chats"
    )
    sandbox.add_argument("--open", action="store_true", help="open the page in a browser")
    sandbox.add_argument(
        "--no-flood-limits",
        action="store_true",
        help="start with Telegram's flood limits off (the page has a switch too)",
    )
    sandbox.set_defaults(target="telesnap.sandbox.cli:main")

    emulator = commands.add_parser("emulator", help="run the local Telegram Bot API emulator")
    emulator.add_argument("--host", default="127.0.0.1", help="address to listen on")
    emulator.add_argument("--port", type=_port, default=8081, help="port to listen on")
    emulator.add_argument(
        "--no-flood-limits", action="store_true", help="switch Telegram's flood limits off"
    )
    emulator.add_argument(
        "--key-file",
        type=Path,
        help="read the run's key for the page and the control API from this file "
        "(default: a random one, printed at start)",
    )
    emulator.add_argument(
        "--public-webhooks",
        action="store_true",
        help="let setWebhook take a URL off this machine (updates are sent there)",
    )
    emulator.set_defaults(target="telesnap.emulator.cli:main")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run the chosen sub-command; return its exit code.

    A setting or database a sub-command cannot use is one line on stderr and exit code 2; what
    the machine refuses (a port in use, a missing folder) is one line and exit code 1. A crash
    below Python (a bus error in SQLite's mapped memory, say) leaves its traceback on stderr.
    """
    with contextlib.suppress(OSError, ValueError):  # a stderr with no file: nowhere to write
        faulthandler.enable()
    try:
        return _run(argv)
    except KeyboardInterrupt:  # Ctrl-C where no command of its own stops on it: the shell's code
        return 130


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    module_name, _, function_name = args.target.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
        exit_code: int = function(args)
    except TokenRevokedError as error:
        _say(str(error))
        return TokenRevokedError.exit_code
    except ConfigError as error:
        _say(str(error))
        return 2
    except BrokenPipeError as error:
        if not _stdout_is_gone():
            _say(str(error))
        return 1
    except socket.gaierror as error:  # a host to listen on that names no address
        option = "host" if getattr(args, "host", None) else "listen"  # emulator, or run
        where = f"--{option} {getattr(args, option, None)}"
        _say(f"cannot listen on {where}: {error.strerror}")
        return 1
    except OSError as error:  # a port in use, an address this machine lacks, a missing folder
        _say(str(error))
        return 1
    except Exception as error:
        refusal = _privilege_refused(error)
        if refusal is None:
            raise
        _say(
            f"the database refused: {refusal}: its user lacks a privilege there"
            " (make it the database's owner, or GRANT what is named)"
        )
        return 2
    return exit_code


def _stdout_is_gone() -> bool:
    """Whether the output went to a reader that stopped (`| head`): then the command is done.

    Its stdout is pointed at nothing, so the exit's flush raises no error either.
    """
    try:
        stdout = sys.stdout.fileno()
    except (OSError, ValueError):
        return False
    poller = select.poll()  # a pipe whose reader closed polls as an error
    poller.register(stdout, select.POLLOUT)
    if not any(events & select.POLLERR for _, events in poller.poll(0)):
        return False
    os.dup2(os.open(os.devnull, os.O_WRONLY), stdout)
    return True


def _say(message: str) -> None:
    """One line on stderr, with any token masked (a supervisor keeps it, as it keeps logs)."""
    print(f"telesnap: {redact(message)}", file=sys.stderr)


def _privilege_refused(error: BaseException) -> str | None:
    """PostgreSQL's refusal for want of a privilege, found in ``error``'s chain (else None).

    The chain is read by its attributes: asyncpg's error and SQLAlchemy's wrapper alike.
    """
    from ..storage.migrate import INSUFFICIENT_PRIVILEGE  # loaded once a command failed

    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if str(getattr(current, "sqlstate", "")) == INSUFFICIENT_PRIVILEGE:
            return (str(current).strip().splitlines() or ["permission denied"])[0]
        original = getattr(current, "orig", None)
        pending += [
            current.__cause__,
            current.__context__,
            original if isinstance(original, BaseException) else None,
        ]
    return None
