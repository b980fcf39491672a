"""Stats benchmark: a big database of games, /stats and /leaderboard, and the cost of a game end.

Run: .venv/bin/python bench/stats.py [--games 100000] [--chats 1000] [--players 20000]
     [--past-games 10000] [--database-url URL] [--keep]

It fills an empty database (default: a SQLite file in /tmp; pass a PostgreSQL
URL with --database-url; see bench/stats_fill.py) with finished games played
by the engine's simulated players, stored exactly as the bot stores them: games, seats, one row per
operation (about 100 a game), the game and player results and the per-player
totals with their OpenSkill ratings, applied in end order. Rows are bulk
inserted. Then it times, for random players and chats, the work behind one
/stats (the service's reads, the caption, the PNG chart) and one /leaderboard
(reads, text, buttons), and prints the medians and the database size per game.

The cost of ending a game as the history grows: the same database also holds
players with 10 past games each and four players with ``--past-games`` past
games each (all four in every one of those games). Games among each group are
then ended one by one, and the game-end transaction is timed: what the bot
runs when a game's last operation comes (lock the game row, append the
operation, mark the game ended, record its stats: results, totals, reaction
counts, median cursor, ratings) and the commit. The two medians should be
within 20% of each other: no part of it reads a player's past games.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine
from stats_fill import (
    FEW_PAST_GAMES,
    GROWTH_RUNS,
    Filler,
    Growth,
    Template,
    bulk,
    fill,
)

from telesnap.bot.render.charts import stats_chart
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.stats import (
    StatsButtonSigner,
    leaderboard_keyboard,
    render_leaderboard,
    render_player_stats,
)
from telesnap.services.play.store import finish_row
from telesnap.services.stats.recorder import record_game_result
from telesnap.services.stats.service import StatsService
from telesnap.services.stats.views import Ranking
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models import (
    Game,
    GameOperation,
    GamePlayer,
)
from telesnap.storage.repositories import OperationRecord
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

TIMED_RUNS = 30
GOAL_MS = 100.0
STATS_GOAL_MS = 50.0


async def database_bytes(url: str) -> int:
    engine = create_engine(url)
    try:
        if engine.dialect.name == "postgresql":
            async with engine.connect() as connection:
                query = text("SELECT pg_database_size(current_database())")
                return int(await connection.scalar(query) or 0)
    finally:
        await engine.dispose()
    return sqlite_bytes(str(engine.url.database))


def sqlite_bytes(database: str) -> int:
    path = Path(database)
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def median_ms_of(samples: list[float]) -> str:
    p90 = sorted(samples)[int(len(samples) * 0.9)]
    return f"{statistics.median(samples) * 1000:7.1f} ms (p90 {p90 * 1000:.1f})"


async def players_by_chat(engine: AsyncEngine) -> dict[int, list[int]]:
    """Who played in each chat that has games (a /stats of anyone else shows no figures)."""
    query = (
        select(Game.chat_id, GamePlayer.user_id)
        .join(GamePlayer, GamePlayer.game_id == Game.id)
        .distinct()
        .order_by(Game.chat_id, GamePlayer.user_id)
    )
    players: dict[int, list[int]] = {}
    async with engine.connect() as connection:
        for chat_id, user_id in await connection.execute(query):
            players.setdefault(chat_id, []).append(user_id)
    return players


async def measure(url: str, args: argparse.Namespace) -> None:
    engine = create_engine(url)
    service = StatsService(UnitsOfWork(session_factory(engine)))
    signer = StatsButtonSigner(b"bench")
    tr = translator("en")
    rng = random.Random(args.seed + 1)
    players_of = await players_by_chat(engine)
    chats = sorted(players_of)
    stats_text, stats_chart_s, stats_total, boards, global_boards = [], [], [], [], []
    await service.leaderboard(chats[0])  # warm the pool
    for run in range(TIMED_RUNS):
        chat = rng.choice(chats)
        user = rng.choice(players_of[chat])  # /stats of someone who played there: with a chart
        began = time.perf_counter()
        view = await service.player(chat, user, "?")
        render_player_stats(view, tr)
        middle = time.perf_counter()
        if view.can_plot:
            stats_chart(view.reaction_counts, view.ratings, view.chat_ratings, tr)
        done = time.perf_counter()
        stats_text.append(middle - began)
        stats_chart_s.append(done - middle)
        stats_total.append(done - began)
        ranking = list(Ranking)[run % 4]
        began = time.perf_counter()
        board = await service.leaderboard(chat, ranking)
        render_leaderboard(board, tr)
        leaderboard_keyboard(board, signer, tr)
        boards.append(time.perf_counter() - began)
        began = time.perf_counter()
        board = await service.leaderboard(chat, ranking, is_global=True)
        render_leaderboard(board, tr)
        leaderboard_keyboard(board, signer, tr)
        global_boards.append(time.perf_counter() - began)
    await engine.dispose()
    size = await database_bytes(url)
    engine = create_engine(url)
    async with engine.connect() as connection:
        games = int(await connection.scalar(text("SELECT count(*) FROM games")) or 1)
    await engine.dispose()
    print(
        f"database: {engine.dialect.name}, {games} games ({args.games} random, the rest "
        f"of the timed players), {size / 1e6:.0f} MB, {size / games / 1024:.1f} KiB per game"
    )
    print(
        f"/stats reads + caption        {median_ms_of(stats_text)}   goal < {STATS_GOAL_MS:.0f} ms"
    )
    print(f"/stats chart (PNG)            {median_ms_of(stats_chart_s)}")
    print(f"/stats end to end             {median_ms_of(stats_total)}   goal < {GOAL_MS:.0f} ms")
    print(f"/leaderboard (chat)           {median_ms_of(boards)}   goal < {GOAL_MS:.0f} ms")
    print(f"/leaderboard (all chats)      {median_ms_of(global_boards)}   goal < {GOAL_MS:.0f} ms")


async def measure_growth(url: str, args: argparse.Namespace) -> None:
    """Time the game-end transaction for newcomers and for veterans, alternately."""
    engine = create_engine(url)
    sessions = session_factory(engine)
    filler = Filler(args)
    growth = Growth(args)
    async with engine.connect() as connection:
        next_id = int(await connection.scalar(text("SELECT max(id) FROM games")) or 0) + 1
    times: dict[str, list[float]] = {"newcomers": [], "veterans": []}
    for run in range(GROWTH_RUNS):
        for group, chat, users in (
            ("newcomers", growth.newcomer_chat, growth.newcomers[run]),
            ("veterans", growth.veteran_chat, growth.veterans),
        ):
            template = filler.template_for(users)
            await start_ended_game(engine, filler, next_id, chat, users, template)
            began = time.perf_counter()
            await end_game(sessions, next_id, users, template)
            times[group].append(time.perf_counter() - began)
            next_id += 1
    service = StatsService(UnitsOfWork(sessions))
    veteran_stats = []
    for _ in range(TIMED_RUNS):
        began = time.perf_counter()
        view = await service.player(growth.veteran_chat, growth.veterans[0], "?")
        render_player_stats(view, translator("en"))
        veteran_stats.append(time.perf_counter() - began)
    await engine.dispose()
    few, many = statistics.median(times["newcomers"]), statistics.median(times["veterans"])
    print(f"game end, {FEW_PAST_GAMES:>6} past games a player {median_ms_of(times['newcomers'])}")
    print(
        f"game end, {args.past_games:>6} past games a player {median_ms_of(times['veterans'])}"
        f"   {100 * (many - few) / few:+.0f}% (goal: within 20%)"
    )
    print(
        f"/stats reads + caption, {args.past_games} games {median_ms_of(veteran_stats)}"
        f"   goal < {STATS_GOAL_MS:.0f} ms"
    )


async def start_ended_game(
    engine: Any, filler: Filler, game_id: int, chat: int, users: list[int], template: Template
) -> None:
    """Store a running game whose history lacks only its last operation."""
    rows = filler.game_rows(game_id, chat, users, template)
    game = rows["games"][0]
    game.update(status="running", ended_at=None, end_reason=None, winner_ids=None)
    async with engine.begin() as connection:
        await bulk(connection, Game.__table__, [game])
        await bulk(connection, GamePlayer.__table__, rows["players"])
        await bulk(connection, GameOperation.__table__, rows["operations"][:-1])


async def end_game(sessions: Any, game_id: int, users: list[int], template: Template) -> None:
    """The game-end transaction, as :meth:`GameStore.save` runs it for the last operation."""
    last = template.history[-1]
    async with UnitOfWork(sessions) as uow:
        row = await uow.games.get(game_id)
        assert row is not None
        await uow.history.append(
            game_id,
            [OperationRecord(last)],
            after_seq=len(template.history) - 1,
        )
        outcome = template.summary
        finish_row(row, outcome.reason, [users[seat] for seat in outcome.winners])
        row.ended_at = datetime.now(UTC)
        await record_game_result(uow, row, template.history, users)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--chats", type=int, default=1000)
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--past-games", type=int, default=10_000, help="past games of the veterans timed"
    )
    parser.add_argument("--database-url", help="default: a new SQLite file in /tmp")
    parser.add_argument("--keep", action="store_true", help="reuse a filled database")
    args = parser.parse_args()
    url = args.database_url
    if url is None:
        path = Path(f"/tmp/telesnap-bench-{args.games}.db")
        if not args.keep and path.exists():
            path.unlink()
        url = f"sqlite+aiosqlite:///{path}"
    if not args.keep:
        asyncio.run(fill(url, args))
    asyncio.run(measure(url, args))
    asyncio.run(measure_growth(url, args))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
