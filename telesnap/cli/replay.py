"""``telesnap replay`` and ``telesnap export``: check stored games, and export a chat's stats.

Both only read: a SQLite file that is not there is named, never created, and when the
sandbox's file is in the folder the message points to it (it keeps its games apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from ..config import (
    DATABASE_URL_VARIABLE,
    DEFAULT_DATABASE_URL,
    ConfigError,
    load_settings,
    normalize_database_url,
)
from ..sandbox.app import DEFAULT_DATABASE_FILE as SANDBOX_DATABASE_FILE
from ..services.stats.audit import (
    DocumentError,
    StoredGame,
    check_game,
    parse_document,
    stored_game,
)
from ..services.stats.service import StatsService
from ..storage.database import create_engine, describe_database, session_factory
from ..storage.migrate import check_revision, current_revision
from ..storage.models import fits_bigint
from ..storage.uow import UnitOfWork, UnitsOfWork

__all__ = ["export_command", "replay_command"]


def _database_url(args: argparse.Namespace) -> tuple[str, str]:
    """The URL to read, and where it came from (said when there is nothing there)."""
    url: str | None = getattr(args, "database_url", None)
    if url:
        return normalize_database_url(url, "--database-url"), "--database-url"
    settings = load_settings(require_token=False)
    if settings.database_url == DEFAULT_DATABASE_URL:
        return (
            settings.database_url,
            f"the default, without --database-url or {DATABASE_URL_VARIABLE}",
        )
    return settings.database_url, DATABASE_URL_VARIABLE


def _sandbox_hint(url: str) -> str:
    """Point to the sandbox's games when they are here and were not the ones read."""
    sandbox = Path(SANDBOX_DATABASE_FILE)
    parsed = make_url(url)
    read = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if not sandbox.is_file() or (read and Path(read).resolve() == sandbox.resolve()):
        return ""
    return f"; the sandbox keeps its games in {sandbox}: add --database-url sqlite:///{sandbox}"


def _check_file(url: str, source: str) -> None:
    """Refuse a SQLite file that is not there (opening it would create an empty one)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database)
        if not path.is_file():
            raise ConfigError(f"there is no database at {path} ({source}){_sandbox_hint(url)}")


async def _check_migrated(url: str) -> None:
    revision = await current_revision(url)
    if revision is None:
        raise ConfigError(
            f"{describe_database(url)} holds no telesnap games (never migrated: is it the "
            f"right database?){_sandbox_hint(url)}"
        )
    check_revision(describe_database(url), revision)


async def _stored_from_database(url: str, game_id: int) -> StoredGame | None:
    await _check_migrated(url)
    engine = create_engine(url)
    try:
        async with UnitOfWork(session_factory(engine), read_only=True) as uow:
            row = await uow.games.get(game_id, lock=False)
            return None if row is None else await stored_game(uow, row)
    finally:
        await engine.dispose()


def replay_command(args: argparse.Namespace) -> int:
    """Rebuild one game from its history and compare it with what is stored."""
    where = "the file"
    try:
        if args.file is not None:
            stored = parse_document(Path(args.file).read_text(encoding="utf-8"))
        else:
            url, source = _database_url(args)
            where = describe_database(url)
            _check_file(url, source)
            found = asyncio.run(_stored_from_database(url, args.game))
            if found is None:
                print(
                    f"telesnap: there is no game {args.game} in {where}{_sandbox_hint(url)}",
                    file=sys.stderr,
                )
                return 1
            stored = found
    except ConfigError:
        raise  # a database it cannot use, as for every command (exit code 2)
    except OSError as error:
        what = f"cannot read {error.filename}: {error.strerror}" if error.filename else error
        print(f"telesnap: {what}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as error:  # a picture, say: the film instead of the file
        byte = error.object[error.start]
        print(
            f"telesnap: {args.file} is not a text file: byte 0x{byte:02x} at offset "
            f"{error.start} is not UTF-8 (/replay ID file sends the file to check)",
            file=sys.stderr,
        )
        return 1
    except DocumentError as error:
        where = args.file if error.line is None else f"{args.file} line {error.line}"
        print(f"telesnap: {where}: {error.reason}", file=sys.stderr)
        return 1
    except ValueError as error:
        print(f"telesnap: {error}", file=sys.stderr)
        return 1
    problems = check_game(stored)
    game = stored.facts.get("game_id", "?")
    if args.file is None:
        print(f"game {game}: read from {where}")
    for problem in problems:
        print(f"game {game}: {problem}")
    if problems:
        return 1
    print(f"game {game}: {len(stored.operations)} operations replayed; they match what is stored")
    return 0


async def _export(url: str, chat_id: int) -> dict[str, Any]:
    await _check_migrated(url)
    engine = create_engine(url)
    try:
        return await StatsService(UnitsOfWork(session_factory(engine))).export_chat(chat_id)
    finally:
        await engine.dispose()


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by its owner only: an export holds names."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)  # a file that was there keeps its mode otherwise
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)


def export_command(args: argparse.Namespace) -> int:
    """Print (or write) a chat's games and figures as JSON."""
    url, source = _database_url(args)
    _check_file(url, source)
    empty: dict[str, Any] = {"games": [], "players": []}
    data = asyncio.run(_export(url, args.chat)) if fits_bigint(args.chat) else empty
    if not data["games"] and not data["players"]:
        print(
            f"telesnap: chat {args.chat} has no ended games in {describe_database(url)}"
            f"{_sandbox_hint(url)}",
            file=sys.stderr,
        )
        return 1
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    if args.output not in (None, "-"):
        write_private(Path(args.output), text + "\n")
    else:
        print(text)
    return 0
