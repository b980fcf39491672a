"""What the stats service hands back for showing: figures, boards, history pages, replays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ...game import Operation
from ...storage.models import PlayerStats
from ...storage.repositories import Ranking

__all__ = [
    "BoardEntry",
    "Figures",
    "GameLine",
    "HistoryPage",
    "LeaderboardView",
    "PlayerStatsView",
    "Ranking",
    "ReplayDocument",
]


@dataclass(frozen=True, slots=True)
class Figures:
    """A player's totals in one scope (a chat, or every chat)."""

    games: int
    wins: int
    snaps_won: int
    pots_won: int
    ties: int
    wrong_calls: int
    cards_won: int
    afks: int
    timed_calls: int
    median_reaction_ms: int | None
    best_reaction_ms: int | None
    rated_games: int
    rating: float
    """The shown rating (see :class:`~.figures.Rating`)."""
    mu: float
    sigma: float

    @property
    def win_rate(self) -> float:
        """Wins per game played, 0 to 1 (0 with no games).

        >>> Figures(4, 1, 0, 0, 0, 0, 0, 0, 0, None, None, 4, 1000.0, 25.0, 8.3).win_rate
        0.25
        """
        return self.wins / self.games if self.games else 0.0

    def ranked_by(self, ranking: Ranking) -> tuple[int, ...]:
        """What a board ranks by, as it shows it: equal values share a place.

        The rating is shown rounded; fewer games break a tie in wins; pots count as snaps.

        >>> figures = Figures(4, 1, 3, 1, 0, 0, 0, 0, 0, None, None, 4, 1012.4, 25.0, 8.3)
        >>> figures.ranked_by(Ranking.RATING), figures.ranked_by(Ranking.WINS)
        ((1012,), (1, 4))
        >>> figures.ranked_by(Ranking.SNAPS)
        (4,)
        """
        if ranking is Ranking.RATING:
            return (round(self.rating),)
        if ranking is Ranking.WINS:
            return (self.wins, self.games)
        if ranking is Ranking.FASTEST:
            return (self.median_reaction_ms or 0,)
        return (self.snaps_won + self.pots_won,)

    @staticmethod
    def of(stats: PlayerStats) -> Figures:
        """The figures of a stored row of totals."""
        return Figures(
            games=stats.games,
            wins=stats.wins,
            snaps_won=stats.snaps_won,
            pots_won=stats.pots_won,
            ties=stats.ties,
            wrong_calls=stats.wrong_calls,
            cards_won=stats.cards_won,
            afks=stats.afks,
            timed_calls=stats.timed_calls,
            median_reaction_ms=stats.median_reaction_ms,
            best_reaction_ms=stats.best_reaction_ms,
            rated_games=stats.rated_games,
            rating=stats.rating_points,
            mu=stats.rating_mu,
            sigma=stats.rating_sigma,
        )


@dataclass(frozen=True, slots=True)
class PlayerStatsView:
    """One player's figures in a chat and everywhere, with what their chart plots."""

    user_id: int
    name: str
    chat: Figures | None
    everywhere: Figures | None
    reaction_counts: tuple[tuple[int, int], ...]
    """Their correct calls in every chat as ``(reaction_ms, calls)``, the fastest first."""
    ratings: tuple[float, ...]
    """Their shown rating across every chat after each rated game, in order.

    Empty where figures across chats are not shown (a group that keeps its figures to itself).
    """
    chat_ratings: tuple[float, ...]
    """Their shown rating in this chat after each rated game here, in order."""
    min_games_to_plot: int
    ratings_from: int = 1
    """The number of the rated game ``ratings`` starts at (only the last ones are kept)."""
    chat_rating_games: tuple[int, ...] = ()
    """The number of each game of ``chat_ratings``: among all chats where ``ratings`` is shown
    (games here before its first are left out), else among the games here (empty: 1, 2, …)."""

    @property
    def can_plot(self) -> bool:
        """Whether there is enough to draw a chart (else the figures go as text alone)."""
        figures = self.everywhere or self.chat
        played = figures.games if figures else 0
        return played >= self.min_games_to_plot and (
            max(len(self.ratings), len(self.chat_ratings)) >= 2
            or sum(calls for _, calls in self.reaction_counts) >= 2
        )


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """One line of a leaderboard."""

    position: int
    """The player's place: tied players share one (1, 2, 2, 4)."""
    user_id: int
    name: str
    figures: Figures


@dataclass(frozen=True, slots=True)
class LeaderboardView:
    """A leaderboard: the best players of a chat (or of every chat) by one ranking."""

    chat_id: int
    is_global: bool
    ranking: Ranking
    entries: tuple[BoardEntry, ...]
    min_games: int
    min_timed_calls: int
    unlisted: int
    """Players with rated games who are not listed yet (too few games)."""
    provisional: bool = False
    """Nobody has enough games (or timed calls) yet: everyone with one is listed."""
    shared: bool = True
    """Whether the chat shows figures across chats (its ``shared_stats`` setting)."""
    more: int = 0
    """Players ranked below the entries: a board lists only its first few."""


@dataclass(frozen=True, slots=True)
class GameLine:
    """One ended game, as the history lists it."""

    game_id: int
    started_at: datetime | None
    ended_at: datetime | None
    players: tuple[str, ...]
    winners: tuple[str, ...]
    end_reason: str
    flips: int
    operations: int
    rated: bool

    @property
    def length_s(self) -> int | None:
        """How long the game lasted, in whole seconds."""
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0, int((self.ended_at - self.started_at).total_seconds()))


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of a chat's ended games, the latest first."""

    chat_id: int
    games: tuple[GameLine, ...]
    page: int
    pages: int
    total: int


@dataclass(frozen=True, slots=True)
class ReplayDocument:
    """One game's summary and its whole history, as operations and as a text document."""

    game: GameLine
    file_name: str
    text: str
    history: tuple[Operation, ...]
    """The operations, for a film of the game; ``game.players`` names their seats."""
