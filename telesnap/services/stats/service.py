"""Stats: a player's figures, leaderboards, a chat's past games, replays and exports.

Each request reads what :mod:`.recorder` wrote, and the history, in one read-only unit of work.
"""

from __future__ import annotations

import math
from typing import Any

from ...storage.models import ALL_CHATS, GameResult, PlayerStats, User
from ...storage.models import Game as GameRow
from ...storage.repositories import Ranking
from ...storage.repositories.privacy import PrivacyRepository
from ...storage.uow import UnitOfWork
from ..ports import UnitOfWorkFactory
from ..settings import GameSettings
from ..types import UNKNOWN_NAME, Reason, Refused, display_name
from .audit import stored_game, write_document
from .views import (
    BoardEntry,
    Figures,
    GameLine,
    HistoryPage,
    LeaderboardView,
    PlayerStatsView,
    ReplayDocument,
)

__all__ = ["StatsService"]

MIN_GAMES = 5
"""Rated games a player needs to be listed on the rating board (games for the others)."""
MIN_TIMED_CALLS = 5
"""Timed correct calls a player needs to be listed on the fastest board."""
BOARD_SIZE = 10
HISTORY_PAGE_SIZE = 5
MIN_GAMES_TO_PLOT = 2
MAX_RATING_POINTS = 500
"""The chart's rating lines show at most this many of a player's last rated games."""


class StatsService:
    """Read figures, boards, histories and replays."""

    def __init__(
        self,
        units: UnitOfWorkFactory,
        *,
        min_games: int = MIN_GAMES,
        min_timed_calls: int = MIN_TIMED_CALLS,
        board_size: int = BOARD_SIZE,
        page_size: int = HISTORY_PAGE_SIZE,
        rating_points: int = MAX_RATING_POINTS,
    ) -> None:
        self._units = units
        self.min_games = min_games
        self.min_timed_calls = min_timed_calls
        self.board_size = board_size
        self.page_size = page_size
        self.rating_points = rating_points

    async def player(self, chat_id: int, user_id: int, fallback_name: str) -> PlayerStatsView:
        """A player's figures here, and in every chat where those may be shown.

        Their private chat shows them; a group, only if it shares figures and saw them play.
        """
        async with self._units(read_only=True) as uow:
            user = await uow.users.get(user_id)
            here = await uow.stats.player_stats(chat_id, user_id)
            shared = user_id == chat_id or (here is not None and await _shares(uow, chat_id))
            everywhere = await uow.stats.player_stats(ALL_CHATS, user_id) if shared else None
            reactions = await uow.stats.reaction_counts(ALL_CHATS if shared else chat_id, user_id)
            chat_timeline = await uow.stats.rating_timeline(
                user_id, chat_id, last=self.rating_points
            )
            timeline = (
                await uow.stats.rating_timeline(user_id, last=self.rating_points) if shared else []
            )
        ratings_from = _first_shown(everywhere, len(timeline))
        # Each rated game's number on the chart's axis: among all chats beside their line.
        numbered = timeline or chat_timeline
        first = ratings_from if timeline else _first_shown(here, len(chat_timeline))
        games = {result_id: first + index for index, (result_id, _) in enumerate(numbered)}
        return PlayerStatsView(
            user_id=user_id,
            name=_name_of(user, fallback_name),
            chat=Figures.of(here) if here else None,
            everywhere=Figures.of(everywhere) if everywhere else None,
            reaction_counts=tuple(reactions),
            ratings=tuple(rating for _, rating in timeline),
            chat_ratings=tuple(rating for result_id, rating in chat_timeline if result_id in games),
            ratings_from=ratings_from,
            chat_rating_games=tuple(
                games[result_id] for result_id, _ in chat_timeline if result_id in games
            ),
            min_games_to_plot=MIN_GAMES_TO_PLOT,
        )

    async def leaderboard(
        self, chat_id: int, ranking: Ranking = Ranking.RATING, *, is_global: bool = False
    ) -> LeaderboardView:
        """The best players of the chat (or of every chat, where the chat shares figures).

        While nobody qualifies, everyone with one is listed as provisional, so a new group sees one.
        """
        async with self._units(read_only=True) as uow:
            shared = await _shares(uow, chat_id)
            is_global = is_global and shared
            scope = ALL_CHATS if is_global else chat_id
            # Across chats, only people seen in a chat that shares its figures.
            seen_in = (
                await PrivacyRepository(uow.session).chats_with_setting("shared_stats")
                if is_global
                else None
            )
            minimum = self.min_timed_calls if ranking is Ranking.FASTEST else self.min_games
            rows = await uow.stats.top_players(
                scope, ranking, minimum=minimum, limit=self.board_size, seen_in=seen_in
            )
            provisional = not rows
            if provisional:  # nobody qualifies yet: everyone with one, marked provisional
                minimum = 1
                rows = await uow.stats.top_players(
                    scope, ranking, minimum=minimum, limit=self.board_size, seen_in=seen_in
                )
            listed, unlisted = await uow.stats.count_players(
                scope, ranking, minimum=minimum, seen_in=seen_in
            )
            more = max(0, listed - len(rows))  # an erasure may come between the reads
        figures = [Figures.of(stats) for stats, _ in rows]
        places = _shared_places(ranking, figures)
        entries = tuple(
            BoardEntry(place, stats.user_id, _name_of(user, UNKNOWN_NAME), shown)
            for place, shown, (stats, user) in zip(places, figures, rows, strict=True)
        )
        return LeaderboardView(
            chat_id=chat_id,
            is_global=is_global,
            ranking=ranking,
            entries=entries,
            min_games=self.min_games,
            min_timed_calls=self.min_timed_calls,
            unlisted=unlisted,
            provisional=provisional and bool(entries),
            shared=shared,
            more=more,
        )

    async def history(self, chat_id: int, page: int = 0) -> HistoryPage:
        """One page of the chat's ended games, the latest first (page 0 is the newest)."""
        async with self._units(read_only=True) as uow:
            total = await uow.stats.count_ended_games(chat_id)
            pages = max(1, math.ceil(total / self.page_size))
            page = min(max(page, 0), pages - 1)
            ended = await uow.stats.ended_games(
                chat_id, offset=page * self.page_size, limit=self.page_size
            )
            names = _seated_names(await uow.stats.seated_users([game.id for _, game in ended]))
        lines = tuple(_game_line(result, game, names[game.id]) for result, game in ended)
        return HistoryPage(chat_id, lines, page, pages, total)

    async def replay(self, chat_id: int, game_id: int) -> ReplayDocument:
        """One of the chat's ended games: its summary and its whole history as a document."""
        async with self._units(read_only=True) as uow:
            row = await uow.games.get(game_id, lock=False)
            result = None if row is None else await uow.stats.game_result(game_id)
            if row is None or row.chat_id != chat_id or result is None:
                raise Refused(Reason.NO_GAME, {"game_id": game_id})
            stored = await stored_game(uow, row)
            history = tuple(record.operation for record in await uow.history.operations(game_id))
            names = _seated_names(await uow.stats.seated_users([game_id]))
        line = _game_line(result, row, names[game_id])
        header = [
            f"telesnap game {game_id}",
            f"players: {', '.join(line.players)}",
            f"winners: {', '.join(line.winners) or '-'} ({line.end_reason})",
            f"flips: {line.flips}; operations: {line.operations}",
            f"started {_iso(row.started_at)}; ended {_iso(row.ended_at)}",
        ]
        text = write_document(stored, header)
        return ReplayDocument(line, f"snap-game-{game_id}.tsv", text, history)

    async def export_chat(self, chat_id: int) -> dict[str, Any]:
        """The chat's ended games and its players' figures, as JSON-ready data."""
        async with self._units(read_only=True) as uow:
            results = await uow.stats.results_in_end_order(chat_id)
            game_ids = [result.game_id for result in results]
            names = _seated_names(await uow.stats.seated_users(game_ids))
            games = []
            for result in results:
                row = await uow.games.get(result.game_id, lock=False)
                assert row is not None
                players = await uow.stats.player_results(result.game_id)
                games.append(_exported_game(result, row, names[result.game_id], players))
            totals = await uow.stats.all_player_stats(chat_id)
            everywhere = {s.user_id: s for s in await uow.stats.all_player_stats(ALL_CHATS)}
            users = await uow.users.get_many([stats.user_id for stats in totals])
        return {
            "chat_id": chat_id,
            "games": games,
            "players": [
                {
                    "user_id": stats.user_id,
                    "name": _name_of(users.get(stats.user_id), UNKNOWN_NAME),
                    "chat": stats.figures(),
                    "all_chats": _figures_or_none(everywhere.get(stats.user_id)),
                }
                for stats in totals
            ],
        }


def _shared_places(ranking: Ranking, figures: list[Figures]) -> list[int]:
    """Each listed player's place, best first: a tie shares one, the next skips (1, 2, 2, 4)."""
    places: list[int] = []
    for index, shown in enumerate(figures):
        tied = index > 0 and shown.ranked_by(ranking) == figures[index - 1].ranked_by(ranking)
        places.append(places[-1] if tied else index + 1)
    return places


def _first_shown(stats: PlayerStats | None, shown: int) -> int:
    """The number of the first rated game among the last ``shown`` (1 when all are)."""
    return (stats.rated_games if stats else shown) - shown + 1


def _figures_or_none(stats: PlayerStats | None) -> dict[str, Any] | None:
    return stats.figures() if stats else None


def _exported_game(
    result: GameResult, row: GameRow, seated: list[tuple[int, str]], players: list[Any]
) -> dict[str, Any]:
    return {
        "game_id": result.game_id,
        "thread_id": row.thread_id,
        "started_at": _iso(row.started_at),
        "ended_at": _iso(row.ended_at),
        "end_reason": result.end_reason,
        "flips": result.flips,
        "operations": result.operations,
        "rated": result.rated,
        "winner_ids": list(result.winner_ids),
        "players": [
            {
                "user_id": p.user_id,
                "name": dict(seated).get(p.user_id, UNKNOWN_NAME),
                "seat": p.seat,
                "place": p.place,
                "won": p.won,
                "walked_away": p.walked_away,
                "snaps_won": p.snaps_won,
                "pots_won": p.pots_won,
                "ties": p.ties,
                "wrong_calls": p.wrong_calls,
                "cards_won": p.cards_won,
                "rating_after": None if p.chat_mu is None else [p.chat_mu, p.chat_sigma],
                "shown_rating_after": p.chat_points,
            }
            for p in players
        ],
    }


def _game_line(result: GameResult, row: GameRow, seated: list[tuple[int, str]]) -> GameLine:
    by_user = dict(seated)
    return GameLine(
        game_id=row.id,
        started_at=row.started_at,
        ended_at=row.ended_at,
        players=tuple(name for _, name in seated),
        winners=tuple(by_user.get(user, UNKNOWN_NAME) for user in result.winner_ids),
        end_reason=result.end_reason,
        flips=result.flips,
        operations=result.operations,
        rated=result.rated,
    )


async def _shares(uow: UnitOfWork, chat_id: int) -> bool:
    """Whether a group chat opted in to figures across chats (never a private chat)."""
    if chat_id > 0:
        return False
    values = await uow.settings.get_values(chat_id)
    return GameSettings.from_values(values).shared_stats


def _seated_names(
    seated: dict[int, list[tuple[int, str | None, str | None, str | None]]],
) -> dict[int, list[tuple[int, str]]]:
    """Each game's players in seat order, as ``(user_id, display name)``."""
    return {
        game_id: [
            (user, display_name(first, last, username)) for user, first, last, username in seats
        ]
        for game_id, seats in seated.items()
    }


def _name_of(user: User | None, fallback: str) -> str:
    return display_name(user.first_name, user.last_name, user.username) if user else fallback


def _iso(moment: Any) -> str | None:
    return moment.isoformat(timespec="seconds") if moment is not None else None
