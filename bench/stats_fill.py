"""Filling the stats benchmark's database: games stored exactly as the bot stores them.

Used by bench/stats.py (see its docstring). Finished games played by the
engine's simulated players are stored with their seats, one row per operation,
the game and player results, and the per-player totals (reaction counts and
median cursors included) with their OpenSkill ratings applied in end order.
Rows are bulk inserted. The timed players of the growth measure (10 past games
each, and veterans with ``--past-games`` each) are filled in the same way.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncConnection

from telesnap.game import CallVerdict, Operation, SnapCalled, operation_to_json
from telesnap.services.stats.figures import (
    GameSummary,
    Rating,
    initial_rating,
    median_ms,
    rate_game,
    summarize_game,
)
from telesnap.services.stats.reactions import ReactionCursor, advance, window
from telesnap.simulate import play_game
from telesnap.storage.database import create_engine
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

TEMPLATES = 3000
FLIP_LIMIT = 50
BATCH_GAMES = 500
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
                "created_at": started,
                "started_at": started,
                "ended_at": ended,
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
                    "result_id": self.result_id,
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
                    "chat_points": chat_rating[seat].points if chat_rating else None,
                    "global_mu": global_rating[seat].mu if global_rating else None,
                    "global_sigma": global_rating[seat].sigma if global_rating else None,
                    "global_points": global_rating[seat].points if global_rating else None,
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
                totals["games"] += summary.played_by(seat)
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
                    "rating_points": rating.points,
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
