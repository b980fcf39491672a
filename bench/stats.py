"""Stats benchmark: a big database of games, /stats and /leaderboard, and the cost of a game end.

Run: .venv/bin/python bench/stats.py [--games 100000] [--chats 1000] [--players 20000]
     [--past-games 10000] [--database-url URL] [--keep]

It fills an empty database (default: a SQLite file in /tmp; pass a PostgreSQL URL
with --database-url) with finished games played by the engine's simulated
players, stored exactly as the bot stores them: games, seats, one row per
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
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncConnection

from telesnap.bot.charts import stats_chart
from telesnap.bot.i18n import translator
from telesnap.bot.stats_render import (
    StatsButtonSigner,
    leaderboard_keyboard,
    render_leaderboard,
    render_player_stats,
)
from telesnap.game import CallVerdict, Operation, SnapCalled, operation_to_json
from telesnap.services.stats import StatsService
from telesnap.services.stats_figures import (
    GameSummary,
    Rating,
    initial_rating,
    median_ms,
    rate_game,
    summarize_game,
)
from telesnap.services.stats_reactions import ReactionCursor, advance, window
from telesnap.services.stats_recorder import record_game_result
from telesnap.services.stats_views import Ranking
from telesnap.services.store import finish_row
from telesnap.simulate import play_game
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.migrate import upgrade_database
from telesnap.storage.models import (
    Chat,
    Game,
    GameOperation,
    GamePlayer,
    GamePlayerResult,
    GameResult,
    PlayerStats,
    ReactionCount,
    User,
)
from telesnap.storage.repositories import OperationRecord
from telesnap.storage.uow import UnitOfWork

TEMPLATES = 3000
FLIP_LIMIT = 50
BATCH_GAMES = 500
TIMED_RUNS = 30
GOAL_MS = 100.0
STATS_GOAL_MS = 50.0
GROWTH_RUNS = 25
GROWTH_PLAYERS = 4
FEW_PAST_GAMES = 10
START = datetime(2026, 1, 1, tzinfo=UTC)


class Template:
    """A simulated game reused for many stored games (with other players and chats)."""

    def __init__(self, rng: random.Random) -> None:
        game = play_game(rng, rng.choice((2, 2, 3, 3, 4, 4, 5, 6)), 100, FLIP_LIMIT)
        self.players = len(game.seats)
        self.history: list[Operation] = list(game.history)
        self.operations = [operation_to_json(op) for op in game.history]
        self.summary: GameSummary = summarize_game(game.history)
        self.correct_calls = sum(
            isinstance(op, SnapCalled) and op.verdict is CallVerdict.PENDING for op in self.history
        )


class Filler:
    """Builds the rows of every game and keeps the totals and ratings in memory."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.rng = random.Random(args.seed)
        self.args = args
        self.templates = [Template(self.rng) for _ in range(TEMPLATES)]
        players = list(range(1, args.players + 1))
        self.members = {
            -(1000 + chat): self.rng.sample(
                players, min(len(players), 3 * args.players // args.chats)
            )
            for chat in range(args.chats)
        }
        self.totals: dict[tuple[int, int], dict[str, Any]] = defaultdict(lambda: defaultdict(int))
        self.ratings: dict[tuple[int, int], Rating] = {}
        self.reactions: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.result_id = 0

    def game_rows(
        self,
        game_id: int,
        chat: int | None = None,
        users: Sequence[int] | None = None,
        template: Template | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The rows of one ended game: random, or at ``chat`` among ``users``."""
        rng = self.rng
        chat = rng.choice(list(self.members)) if chat is None else chat
        if template is None:
            template = self.template_for(users)
        summary = template.summary
        users = rng.sample(self.members[chat], template.players) if users is None else list(users)
        ended = START + timedelta(seconds=game_id * 30)
        started = ended - timedelta(seconds=rng.randint(60, 900))
        winners = [users[seat] for seat in summary.winners]
        rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        rows["games"].append(
            {
                "id": game_id,
                "chat_id": chat,
                "thread_id": 0,
                "status": "finished" if summary.counted else "abandoned",
                "creator_id": users[0],
                "settings": {},
                "seed": game_id,
                "board_version": 0,
                "created_at": started,
                "started_at": started,
                "ended_at": ended,
                "last_action_at": ended,
                "end_reason": summary.reason.value,
                "winner_ids": winners,
            }
        )
        rows["players"] = [
            {
                "game_id": game_id,
                "seat": seat,
                "user_id": user,
                "joined_at": started,
                "afk_streak": 0,
                "afk_total": 0,
            }
            for seat, user in enumerate(users)
        ]
        timed: dict[int, list[int]] = defaultdict(list)
        for seq, payload in enumerate(template.operations, start=1):
            seat = payload.get("seat")
            kind = payload["kind"]
            reaction = None
            if kind == "snap_called":
                reaction = rng.randint(150, 1200)
                if payload["verdict"] == "pending":
                    timed[users[seat]].append(reaction)
            acting = kind in ("card_flipped", "snap_called") and seat is not None
            rows["operations"].append(
                {
                    "game_id": game_id,
                    "seq": seq,
                    "kind": kind,
                    "payload": payload,
                    "recorded_at": ended,
                    "user_id": users[seat] if acting else None,
                    "reaction_ms": reaction,
                }
            )
        self.result_id += 1
        rows["results"].append(
            {
                "id": self.result_id,
                "game_id": game_id,
                "chat_id": chat,
                "ended_at": ended,
                "end_reason": summary.reason.value,
                "players": len(users),
                "flips": summary.flips,
                "operations": summary.operations,
                "counted": summary.counted,
                "rated": summary.rated,
                "winner_ids": winners,
            }
        )
        after = self.apply(chat, users, summary, timed)
        for seat, user in enumerate(users):
            figures = summary.seats[seat]
            chat_rating, global_rating = after.get(chat), after.get(0)
            rows["player_results"].append(
                {
                    "game_id": game_id,
                    "user_id": user,
                    "seat": seat,
                    "place": summary.places[seat],
                    "won": summary.won(seat),
                    "walked_away": figures.walked_away.value if figures.walked_away else None,
                    "snaps_won": figures.snaps_won,
                    "pots_won": figures.pots_won,
                    "ties": figures.ties,
                    "wrong_calls": figures.wrong_calls,
                    "cards_won": figures.cards_won,
                    "chat_mu": chat_rating[seat].mu if chat_rating else None,
                    "chat_sigma": chat_rating[seat].sigma if chat_rating else None,
                    "global_mu": global_rating[seat].mu if global_rating else None,
                    "global_sigma": global_rating[seat].sigma if global_rating else None,
                }
            )
        return rows

    def template_for(self, users: Sequence[int] | None) -> Template:
        """A random game (of ``len(users)`` players, counted, with correct calls if given)."""
        if users is None:
            return self.rng.choice(self.templates)
        fitting = [
            t
            for t in self.templates
            if t.players == len(users) and t.summary.rated and t.correct_calls
        ]
        return self.rng.choice(fitting)

    def apply(
        self, chat: int, users: list[int], summary: GameSummary, timed: dict[int, list[int]]
    ) -> dict[int, list[Rating]]:
        after: dict[int, list[Rating]] = {}
        if not summary.counted:
            return after
        for scope in (chat, 0):
            keys = [(scope, user) for user in users]
            if summary.rated:
                before = [self.ratings.get(key, initial_rating()) for key in keys]
                after[scope] = rate_game(before, summary.places)
                self.ratings.update(zip(keys, after[scope], strict=True))
            for seat, key in enumerate(keys):
                totals = self.totals[key]
                figures = summary.seats[seat]
                totals["games"] += 1
                totals["wins"] += summary.won(seat)
                totals["rated_games"] += summary.rated
                for name in ("snaps_won", "pots_won", "ties", "wrong_calls", "cards_won"):
                    totals[name] += getattr(figures, name)
                totals["afks"] += bool(figures.walked_away and figures.walked_away.value == "afk")
                self.reactions[key].extend(timed.get(users[seat], ()))
        return after

    def player_stats_rows(self) -> list[dict[str, Any]]:
        rows = []
        for key, totals in self.totals.items():
            rating = self.ratings.get(key, initial_rating())
            times = self.reactions[key]
            cursor = cursor_of(times)
            rows.append(
                {
                    "scope_id": key[0],
                    "user_id": key[1],
                    **{
                        name: totals[name]
                        for name in (
                            "games",
                            "wins",
                            "snaps_won",
                            "pots_won",
                            "ties",
                            "wrong_calls",
                            "cards_won",
                            "afks",
                            "rated_games",
                        )
                    },
                    "timed_calls": len(times),
                    "median_reaction_ms": median_ms(times),
                    "best_reaction_ms": min(times) if times else None,
                    "lower_median_ms": cursor.lower_median_ms,
                    "calls_faster_than_lower_median": cursor.faster_calls,
                    "rating_mu": rating.mu,
                    "rating_sigma": rating.sigma,
                    "rating_ordinal": rating.ordinal,
                    "last_game_id": None,
                    "updated_at": START,
                }
            )
        return rows

    def reaction_count_rows(self) -> list[dict[str, Any]]:
        return [
            {"scope_id": scope, "user_id": user, "reaction_ms": ms, "calls": calls}
            for (scope, user), times in self.reactions.items()
            for ms, calls in sorted(Counter(times).items())
        ]


def cursor_of(times: list[int]) -> ReactionCursor:
    """The median cursor of a whole list of reaction times (what the recorder keeps)."""
    if not times:
        return ReactionCursor()
    return advance(ReactionCursor(), times, *window(Counter(times), ReactionCursor(), times))


class Growth:
    """The players whose game ends are timed: newcomers (10 past games) and veterans."""

    def __init__(self, args: argparse.Namespace) -> None:
        first_user = args.players + 1
        self.veteran_chat = -(1000 + args.chats)
        self.newcomer_chat = -(1000 + args.chats + 1)
        self.veterans = list(range(first_user, first_user + GROWTH_PLAYERS))
        first_newcomer = first_user + GROWTH_PLAYERS
        self.newcomers = [
            list(range(start, start + GROWTH_PLAYERS))
            for start in range(
                first_newcomer, first_newcomer + GROWTH_RUNS * GROWTH_PLAYERS, GROWTH_PLAYERS
            )
        ]
        self.past_games = args.past_games

    @property
    def users(self) -> list[int]:
        return self.veterans + [user for group in self.newcomers for user in group]

    def past(self) -> list[tuple[int, list[int]]]:
        """``(chat, users)`` of every past game of the timed players."""
        games = [(self.veteran_chat, self.veterans)] * self.past_games
        for group in self.newcomers:
            games += [(self.newcomer_chat, group)] * FEW_PAST_GAMES
        return games


async def bulk(connection: AsyncConnection, table: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), 20_000):
        await connection.execute(insert(table), rows[start : start + 20_000])


async def fill(url: str, args: argparse.Namespace) -> int:
    await upgrade_database(url)
    engine = create_engine(url)
    filler = Filler(args)
    growth = Growth(args)
    began = time.perf_counter()
    operations = 0
    async with engine.begin() as connection:
        await bulk(
            connection,
            User.__table__,
            [
                {
                    "id": user,
                    "first_name": f"Player {user}",
                    "created_at": START,
                    "updated_at": START,
                }
                for user in [*range(1, args.players + 1), *growth.users]
            ],
        )
        await bulk(
            connection,
            Chat.__table__,
            [
                {
                    "id": chat,
                    "type": "group",
                    "title": f"Chat {chat}",
                    "is_forum": False,
                    "created_at": START,
                }
                for chat in [*filler.members, growth.veteran_chat, growth.newcomer_chat]
            ],
        )
    past = growth.past()
    total = args.games + len(past)
    for first in range(1, total + 1, BATCH_GAMES):
        batch: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for game_id in range(first, min(total + 1, first + BATCH_GAMES)):
            if game_id <= args.games:
                rows_of_game = filler.game_rows(game_id)
            else:
                chat, users = past[game_id - args.games - 1]
                rows_of_game = filler.game_rows(game_id, chat, users)
            for name, rows in rows_of_game.items():
                batch[name].extend(rows)
        operations += len(batch["operations"])
        async with engine.begin() as connection:
            await bulk(connection, Game.__table__, batch["games"])
            await bulk(connection, GamePlayer.__table__, batch["players"])
            await bulk(connection, GameOperation.__table__, batch["operations"])
            await bulk(connection, GameResult.__table__, batch["results"])
            await bulk(connection, GamePlayerResult.__table__, batch["player_results"])
        if first % 10_000 == 1:
            print(
                f"  {first - 1:>7} games, {operations:>9} operations, "
                f"{time.perf_counter() - began:6.0f} s",
                file=sys.stderr,
            )
    async with engine.begin() as connection:
        await bulk(connection, PlayerStats.__table__, filler.player_stats_rows())
        await bulk(connection, ReactionCount.__table__, filler.reaction_count_rows())
        if engine.dialect.name == "postgresql":
            await connection.execute(
                text("SELECT setval('game_results_id_seq', :n)"), {"n": filler.result_id}
            )
            await connection.execute(text("SELECT setval('games_id_seq', :n)"), {"n": total})
            await connection.execute(text("ANALYZE"))
        else:
            await connection.execute(text("ANALYZE"))
    await engine.dispose()
    print(
        f"filled {args.games} games (+{len(past)} of the timed players), "
        f"{operations} operations in {time.perf_counter() - began:.0f} s"
    )
    return operations


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


async def measure(url: str, args: argparse.Namespace) -> None:
    engine = create_engine(url)
    service = StatsService(session_factory(engine))
    signer = StatsButtonSigner(b"bench")
    tr = translator("en")
    rng = random.Random(args.seed + 1)
    chats = [-(1000 + chat) for chat in range(args.chats)]
    stats_text, stats_chart_s, stats_total, boards, global_boards = [], [], [], [], []
    await service.leaderboard(chats[0])  # warm the pool
    for run in range(TIMED_RUNS):
        chat = rng.choice(chats)
        user = rng.randint(1, args.players)
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
    service = StatsService(sessions)
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
    game["history_length"] = len(template.history) - 1
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
            [OperationRecord(last.kind, operation_to_json(last))],
            after_seq=len(template.history) - 1,
        )
        row.history_length = len(template.history)
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
