"""Stats kept beside the history: each ended game's result, and per-player aggregates.

Written in the transaction that stores a game's last operations, so they always agree with
the history (and can be recomputed from it). ``game_results.id`` is the end order, in which
ratings are applied; ``reaction_counts`` keeps median and best reaction times exact at a fixed
cost per call (see :mod:`telesnap.services.stats.reactions`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, RowId, UtcDateTime, utc_now

__all__ = ["ALL_CHATS", "GamePlayerResult", "GameResult", "PlayerStats", "ReactionCount"]

ALL_CHATS = 0
"""The ``scope_id`` of the figures across every chat (chat ids are never 0)."""


class GameResult(Base):
    """How an ended game turned out; ``id`` numbers the games in the order they ended."""

    __tablename__ = "game_results"
    __table_args__ = (Index(None, "chat_id", "id"),)

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), unique=True
    )
    chat_id: Mapped[int] = mapped_column(BigInteger)
    ended_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now)
    end_reason: Mapped[str] = mapped_column(String(16))
    players: Mapped[int] = mapped_column(Integer)
    flips: Mapped[int] = mapped_column(Integer)
    operations: Mapped[int] = mapped_column(Integer)
    counted: Mapped[bool] = mapped_column(Boolean)
    """Whether the game counts in the figures (it was not abandoned)."""
    rated: Mapped[bool] = mapped_column(Boolean)
    """Whether the game changed ratings (counted, and at least two players stayed)."""
    winner_ids: Mapped[list[int]] = mapped_column(JSON, default=list)


class GamePlayerResult(Base):
    """One player's result in an ended game, and their ratings right after it."""

    __tablename__ = "game_player_results"
    __table_args__ = (Index(None, "user_id", "result_id"),)

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    result_id: Mapped[int] = mapped_column(RowId)
    """The game's place in the end order (its ``game_results.id``): a player's rating
    timeline is read from the end of this index, however many games came before."""
    seat: Mapped[int] = mapped_column(Integer)
    place: Mapped[int] = mapped_column(Integer)
    """1 for the winners, then down the final standings (equal places share)."""
    won: Mapped[bool] = mapped_column(Boolean)
    walked_away: Mapped[str | None] = mapped_column(String(16))
    """How the player left before the end (left, removed, afk), or None."""
    snaps_won: Mapped[int] = mapped_column(Integer)
    pots_won: Mapped[int] = mapped_column(Integer)
    ties: Mapped[int] = mapped_column(Integer)
    wrong_calls: Mapped[int] = mapped_column(Integer)
    cards_won: Mapped[int] = mapped_column(Integer)
    chat_mu: Mapped[float | None] = mapped_column(Float)
    chat_sigma: Mapped[float | None] = mapped_column(Float)
    global_mu: Mapped[float | None] = mapped_column(Float)
    global_sigma: Mapped[float | None] = mapped_column(Float)
    chat_points: Mapped[float | None] = mapped_column(Float)
    """The rating shown in the chat after the game (None: the game was not rated)."""
    global_points: Mapped[float | None] = mapped_column(Float)
    """The rating shown across every chat after the game."""


class PlayerStats(Base):
    """A player's running totals in one chat, or across every chat (``scope_id`` 0)."""

    __tablename__ = "player_stats"
    __table_args__ = (Index(None, "scope_id", "rating_points"),)

    scope_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    snaps_won: Mapped[int] = mapped_column(Integer, default=0)
    pots_won: Mapped[int] = mapped_column(Integer, default=0)
    ties: Mapped[int] = mapped_column(Integer, default=0)
    wrong_calls: Mapped[int] = mapped_column(Integer, default=0)
    cards_won: Mapped[int] = mapped_column(Integer, default=0)
    afks: Mapped[int] = mapped_column(Integer, default=0)
    timed_calls: Mapped[int] = mapped_column(Integer, default=0)
    median_reaction_ms: Mapped[int | None] = mapped_column(Integer)
    best_reaction_ms: Mapped[int | None] = mapped_column(Integer)
    lower_median_ms: Mapped[int | None] = mapped_column(Integer)
    """The median cursor: the reaction time at rank ``(timed_calls - 1) // 2``."""
    calls_faster_than_lower_median: Mapped[int] = mapped_column(
        Integer, default=0, server_default="0"
    )
    """The median cursor: how many timed calls were faster than ``lower_median_ms``."""
    rated_games: Mapped[int] = mapped_column(Integer, default=0)
    rating_mu: Mapped[float] = mapped_column(Float)
    rating_sigma: Mapped[float] = mapped_column(Float)
    rating_ordinal: Mapped[float] = mapped_column(Float)
    """OpenSkill's ``mu - 3 sigma`` (exported; not shown)."""
    rating_points: Mapped[float] = mapped_column(Float, server_default="1000")
    """The rating shown and ranked by (1000 before any rated game, see
    :class:`telesnap.services.stats.figures.Rating`)."""
    last_game_id: Mapped[int | None] = mapped_column(RowId)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utc_now, onupdate=utc_now)

    def figures(self) -> dict[str, Any]:
        """The figures as a plain dict (for exports)."""
        return {
            column: getattr(self, column)
            for column in (
                "games",
                "wins",
                "snaps_won",
                "pots_won",
                "ties",
                "wrong_calls",
                "cards_won",
                "afks",
                "timed_calls",
                "median_reaction_ms",
                "best_reaction_ms",
                "rated_games",
                "rating_mu",
                "rating_sigma",
                "rating_ordinal",
                "rating_points",
            )
        }


class ReactionCount(Base):
    """How many of a player's correct calls took exactly ``reaction_ms`` (in one scope)."""

    __tablename__ = "reaction_counts"

    scope_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    """A chat id, or :data:`ALL_CHATS`."""
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    reaction_ms: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    calls: Mapped[int] = mapped_column(Integer)
