"""``telesnap replay`` and ``telesnap export``: check stored games, and export a chat's stats.

``telesnap replay FILE`` reads a document sent by /replay (or written by
``telesnap replay --game ID --write FILE``), rebuilds the game from its
operations and compares it with the ``# stored:`` facts of the header;
``telesnap replay --game ID`` does the same with the database's rows. Any
difference is printed and the exit code is 1.

``telesnap export --chat ID`` prints the chat's ended games and its players'
figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_settings
from ..services.stats import StatsService
from ..services.stats_audit import StoredGame, check_game, parse_document, stored_game
from ..storage.database import create_engine, session_factory
from ..storage.uow import UnitOfWork, UnitsOfWork

__all__ = ["export_command", "replay_command"]


def _database_url(args: argparse.Namespace) -> str:
    url: str | None = getattr(args, "database_url", None)
    return url or load_settings(require_token=False).database_url


async def _stored_from_database(url: str, game_id: int) -> StoredGame | None:
    engine = create_engine(url)
    try:
        async with UnitOfWork(session_factory(engine), read_only=True) as uow:
            row = await uow.games.get(game_id, lock=False)
            return None if row is None else await stored_game(uow, row)
    finally:
        await engine.dispose()


def replay_command(args: argparse.Namespace) -> int:
    """Rebuild one game from its history and compare it with what is stored."""
    try:
        if args.file is not None:
            stored = parse_document(Path(args.file).read_text(encoding="utf-8"))
        else:
            found = asyncio.run(_stored_from_database(_database_url(args), args.game))
            if found is None:
                print(f"telesnap: there is no game {args.game}", file=sys.stderr)
                return 1
            stored = found
    except (OSError, ValueError, ConfigError) as error:
        print(f"telesnap: {error}", file=sys.stderr)
        return 1
    problems = check_game(stored)
    game = stored.facts.get("game_id", "?")
    for problem in problems:
        print(f"game {game}: {problem}")
    if problems:
        return 1
    print(f"game {game}: {len(stored.operations)} operations replayed; they match what is stored")
    return 0


async def _export(url: str, chat_id: int) -> dict[str, Any]:
    engine = create_engine(url)
    try:
        return await StatsService(UnitsOfWork(session_factory(engine))).export_chat(chat_id)
    finally:
        await engine.dispose()


def export_command(args: argparse.Namespace) -> int:
    """Print (or write) a chat's games and figures as JSON."""
    try:
        data = asyncio.run(_export(_database_url(args), args.chat))
    except ConfigError as error:
        print(f"telesnap: {error}", file=sys.stderr)
        return 2
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    if args.output is not None:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0
