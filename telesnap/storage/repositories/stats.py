"""Stats: game results, per-game player results and per-player totals, and their reads."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import case, func, select, tuple_, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from ..models import (
    Game,
    GameOperation,
    GamePlayer,
    GamePlayerResult,
    GameResult,
    PlayerStats,
    ReactionCount,
    User,
)
from ._dialect import upsert_insert

__all__ = ["Ranking", "StatsRepository"]


class Ranking(enum.Enum):
    """What a leaderboard ranks by."""

    RATING = "rating"
    WINS = "wins"
    FASTEST = "fastest"
    SNAPS = "snaps"


_ORDER: dict[Ranking, tuple[Any, ...]] = {
    Ranking.RATING: (PlayerStats.rating_points.desc(), PlayerStats.user_id),
    Ranking.WINS: (PlayerStats.wins.desc(), PlayerStats.games, PlayerStats.user_id),
    Ranking.FASTEST: (PlayerStats.median_reaction_ms, PlayerStats.user_id),
    Ranking.SNAPS: (
        (PlayerStats.snaps_won + PlayerStats.pots_won).desc(),
        PlayerStats.games,
        PlayerStats.user_id,
    ),
}


def listed_by(ranking: Ranking) -> Any:
    """What a leaderboard needs enough of to list a player: timed calls, else rated games."""
    return PlayerStats.timed_calls if ranking is Ranking.FASTEST else PlayerStats.rated_games


_BUCKET = (
    ReactionCount.scope_id,
    ReactionCount.user_id,
    ReactionCount.reaction_ms,
    ReactionCount.calls,
)


def _seen_in(chat_ids: Sequence[int] | None) -> tuple[Any, ...]:
    """The condition "has figures in one of ``chat_ids``" (none when ``chat_ids`` is None)."""
    if chat_ids is None:
        return ()
    scoped = aliased(PlayerStats)
    return (
        PlayerStats.user_id.in_(select(scoped.user_id).where(scoped.scope_id.in_(list(chat_ids)))),
    )


class StatsRepository:
    """Write a game's results and read figures, boards and the list of past games."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    # -- writing ------------------------------------------------------------------------

    async def lock_player_stats(
        self, keys: Sequence[tuple[int, int]], mu: float, sigma: float, points: float
    ) -> dict[tuple[int, int], PlayerStats]:
        """The totals of each ``(scope_id, user_id)``, created empty if missing, locked.

        Locked in key order (``FOR UPDATE``), so concurrent games sharing players take turns.
        """
        ordered = sorted(set(keys))
        fresh = [
            {
                "scope_id": scope_id,
                "user_id": user_id,
                "games": 0,
                "wins": 0,
                "snaps_won": 0,
                "pots_won": 0,
                "ties": 0,
                "wrong_calls": 0,
                "cards_won": 0,
                "afks": 0,
                "timed_calls": 0,
                "calls_faster_than_lower_median": 0,
                "rated_games": 0,
                "rating_mu": mu,
                "rating_sigma": sigma,
                "rating_ordinal": mu - 3 * sigma,
                "rating_points": points,
            }
            for scope_id, user_id in ordered
        ]
        if fresh:
            insert = upsert_insert(self._session, PlayerStats).values(fresh)
            await self._session.execute(insert.on_conflict_do_nothing())
        statement = (
            select(PlayerStats)
            .where(tuple_(PlayerStats.scope_id, PlayerStats.user_id).in_(ordered))
            .order_by(PlayerStats.scope_id, PlayerStats.user_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        rows = await self._session.scalars(statement)
        return {(row.scope_id, row.user_id): row for row in rows}

    async def add_result(self, result: GameResult, players: Iterable[GamePlayerResult]) -> None:
        """Store an ended game's result (which gets its ``id``, the end order) and players'."""
        self._session.add(result)
        await self._session.flush()
        rows = list(players)
        for row in rows:
            row.result_id = result.id
        self._session.add_all(rows)
        await self._session.flush()

    async def game_reaction_times(self, game_id: int) -> dict[int, list[int]]:
        """Each caller's reaction times (ms) of the game's correct calls, in the game's order.

        Only the game's own rows are read (its primary key range), never the past.
        """
        statement = (
            select(GameOperation.user_id, GameOperation.reaction_ms)
            .where(
                GameOperation.game_id == game_id,
                GameOperation.kind == "snap_called",
                GameOperation.reaction_ms.is_not(None),
                GameOperation.user_id.is_not(None),
                GameOperation.payload["verdict"].as_string() == "pending",
            )
            .order_by(GameOperation.seq)
        )
        times: dict[int, list[int]] = {}
        for user_id, reaction_ms in await self._session.execute(statement):
            if user_id is not None and reaction_ms is not None:  # as the query asks
                times.setdefault(user_id, []).append(reaction_ms)
        return times

    async def add_reaction_times(self, times: Mapping[tuple[int, int], Sequence[int]]) -> None:
        """Count each ``(scope_id, user_id)``'s new reaction times into their ms buckets."""
        rows = [
            {"scope_id": scope_id, "user_id": user_id, "reaction_ms": ms, "calls": calls}
            for (scope_id, user_id), new in sorted(times.items())
            for ms, calls in sorted(Counter(new).items())
        ]
        if not rows:
            return
        insert = upsert_insert(self._session, ReactionCount).values(rows)
        await self._session.execute(
            insert.on_conflict_do_update(
                index_elements=["scope_id", "user_id", "reaction_ms"],
                set_={"calls": ReactionCount.calls + insert.excluded.calls},
            )
        )

    async def reaction_windows(
        self, anchors: Mapping[tuple[int, int], tuple[int, int]]
    ) -> dict[tuple[int, int], tuple[list[tuple[int, int]], list[tuple[int, int]]]]:
        """Around each ``(scope_id, user_id)``'s ``(anchor_ms, size)``: their ms buckets.

        Up to ``size`` from ``anchor_ms`` up (fastest first) and ``size`` below (slowest first), for
        :func:`telesnap.services.stats.reactions.advance`: index range reads bounded by ``size``
        however many calls the player made, all in one statement.
        """
        parts = []
        for (scope_id, user_id), (anchor_ms, size) in sorted(anchors.items()):
            mine = (ReactionCount.scope_id == scope_id, ReactionCount.user_id == user_id)
            for side, order in (
                (ReactionCount.reaction_ms >= anchor_ms, ReactionCount.reaction_ms),
                (ReactionCount.reaction_ms < anchor_ms, ReactionCount.reaction_ms.desc()),
            ):
                part = select(*_BUCKET).where(*mine, side).order_by(order).limit(size).subquery()
                parts.append(select(*part.c))
        windows: dict[tuple[int, int], tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {
            key: ([], []) for key in anchors
        }
        if not parts:
            return windows
        for scope_id, user_id, ms, calls in await self._session.execute(union_all(*parts)):
            key = (scope_id, user_id)
            at_or_above, below = windows[key]
            (at_or_above if ms >= anchors[key][0] else below).append((ms, calls))
        for at_or_above, below in windows.values():
            at_or_above.sort()
            below.sort(reverse=True)
        return windows

    # -- reading ------------------------------------------------------------------------

    async def player_stats(self, scope_id: int, user_id: int) -> PlayerStats | None:
        """The user's totals in a chat (or across every chat with :data:`ALL_CHATS`)."""
        return await self._session.get(PlayerStats, (scope_id, user_id))

    async def reaction_counts(self, scope_id: int, user_id: int) -> list[tuple[int, int]]:
        """The user's ``(reaction_ms, calls)`` buckets in a scope, the fastest first."""
        statement = (
            select(ReactionCount.reaction_ms, ReactionCount.calls)
            .where(ReactionCount.scope_id == scope_id, ReactionCount.user_id == user_id)
            .order_by(ReactionCount.reaction_ms)
        )
        return [(ms, calls) for ms, calls in await self._session.execute(statement)]

    async def rating_timeline(
        self, user_id: int, chat_id: int | None = None, *, last: int | None = None
    ) -> list[tuple[int, float]]:
        """The user's shown rating after each rated game, in the order games ended.

        As (result id, rating). In ``chat_id`` if given, else across every chat; only the
        ``last`` rated games if given.
        """
        points = (
            GamePlayerResult.chat_points if chat_id is not None else GamePlayerResult.global_points
        )
        statement = (
            select(GamePlayerResult.result_id, points)
            .join(GameResult, GameResult.id == GamePlayerResult.result_id)
            .where(GamePlayerResult.user_id == user_id, GameResult.rated.is_(True))
            .order_by(GamePlayerResult.result_id.desc())
            .limit(last)
        )
        if chat_id is not None:
            statement = statement.where(GameResult.chat_id == chat_id)
        rows = list(await self._session.execute(statement))
        return [(result_id, value) for result_id, value in reversed(rows) if value is not None]

    async def top_players(
        self,
        scope_id: int,
        ranking: Ranking,
        *,
        minimum: int,
        limit: int,
        seen_in: Sequence[int] | None = None,
    ) -> list[tuple[PlayerStats, User | None]]:
        """The best players of a scope by ``ranking``, with ``minimum`` of :func:`listed_by`.

        ``seen_in``: only players with figures in one of these chats (None: anyone).
        """
        statement = (
            select(PlayerStats, User)
            .outerjoin(User, User.id == PlayerStats.user_id)
            .where(
                PlayerStats.scope_id == scope_id,
                *_seen_in(seen_in),
                listed_by(ranking) >= minimum,
            )
            .order_by(*_ORDER[ranking])
            .limit(limit)
        )
        rows = await self._session.execute(statement)
        return [(stats, user) for stats, user in rows]

    async def count_players(
        self,
        scope_id: int,
        ranking: Ranking,
        *,
        minimum: int,
        seen_in: Sequence[int] | None = None,
    ) -> tuple[int, int]:
        """How many players :meth:`top_players` would rank, and how many are short of it.

        Ranked: with no limit. Short: some of what ``ranking`` lists by, but too few. One read.
        """
        figure = listed_by(ranking)
        statement = select(
            func.count(case((figure >= minimum, 1))), func.count(case((figure > 0, 1)))
        ).where(PlayerStats.scope_id == scope_id, *_seen_in(seen_in))
        listed, some = (await self._session.execute(statement)).one()
        return int(listed), int(some) - int(listed)

    async def ended_games(
        self, chat_id: int, *, offset: int, limit: int
    ) -> list[tuple[GameResult, Game]]:
        """The chat's ended games, the latest first."""
        statement = (
            select(GameResult, Game)
            .join(Game, Game.id == GameResult.game_id)
            .where(GameResult.chat_id == chat_id)
            .order_by(GameResult.id.desc())
            .offset(offset)
            .limit(limit)
        )
        return [(result, game) for result, game in (await self._session.execute(statement))]

    async def count_ended_games(self, chat_id: int) -> int:
        """How many games have ended in the chat."""
        statement = select(func.count()).where(GameResult.chat_id == chat_id)
        return int(await self._session.scalar(statement) or 0)

    async def seated_users(
        self, game_ids: Sequence[int]
    ) -> dict[int, list[tuple[int, str | None, str | None, str | None]]]:
        """Each game's players in seat order, as ``(user_id, first, last, username)``.

        None: no user row. An erased seat shows its placeholder, whatever name its user has since.
        """
        statement = (
            select(
                GamePlayer.game_id,
                GamePlayer.user_id,
                func.coalesce(GamePlayer.shown_name, User.first_name),
                case((GamePlayer.shown_name.is_(None), User.last_name)),
                case((GamePlayer.shown_name.is_(None), User.username)),
            )
            .outerjoin(User, User.id == GamePlayer.user_id)
            .where(GamePlayer.game_id.in_(list(game_ids)))
            .order_by(GamePlayer.game_id, GamePlayer.seat)
        )
        seated: dict[int, list[tuple[int, str | None, str | None, str | None]]] = {
            game_id: [] for game_id in game_ids
        }
        for game_id, user_id, first, last, username in await self._session.execute(statement):
            seated[game_id].append((user_id, first, last, username))
        return seated

    async def game_result(self, game_id: int) -> GameResult | None:
        """The stored result of an ended game."""
        return await self._session.scalar(select(GameResult).where(GameResult.game_id == game_id))

    async def player_results(self, game_id: int) -> list[GamePlayerResult]:
        """The players' stored results of an ended game, in seat order."""
        statement = (
            select(GamePlayerResult)
            .where(GamePlayerResult.game_id == game_id)
            .order_by(GamePlayerResult.seat)
        )
        return list(await self._session.scalars(statement))

    async def results_in_end_order(self, chat_id: int | None = None) -> list[GameResult]:
        """Every stored game result (only the chat's, if given), in the order games ended."""
        statement = select(GameResult).order_by(GameResult.id)
        if chat_id is not None:
            statement = statement.where(GameResult.chat_id == chat_id)
        return list(await self._session.scalars(statement))

    async def all_player_stats(self, scope_id: int | None = None) -> list[PlayerStats]:
        """Every player's totals (of one scope if given)."""
        statement = select(PlayerStats).order_by(PlayerStats.scope_id, PlayerStats.user_id)
        if scope_id is not None:
            statement = statement.where(PlayerStats.scope_id == scope_id)
        return list(await self._session.scalars(statement))
