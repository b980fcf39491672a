"""Recording an ended game's stats in the transaction that stores its last operations.

:func:`record_game_result` is called by :meth:`GameStore.save` when a game has
just ended. It stores the game's result and each player's, adds the figures to
the players' totals in the chat and across every chat, and applies the rating
change (Plackett-Luce over the final standings, see
:mod:`telesnap.services.stats_figures`). Because it runs in the same unit of
work as the history, the figures can never disagree with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..game import LeaveReason, Operation
from ..storage.models import ALL_CHATS, GamePlayerResult, GameResult, PlayerStats
from ..storage.models import Game as GameRow
from ..storage.uow import UnitOfWork
from .stats_figures import (
    GameSummary,
    Rating,
    initial_rating,
    median_ms,
    rate_game,
    summarize_game,
)

__all__ = ["record_game_result", "record_summary"]


async def record_game_result(
    uow: UnitOfWork, row: GameRow, history: Sequence[Operation], user_ids: Sequence[int]
) -> None:
    """Store the stats of the game ``row`` that ``history`` has just ended.

    ``user_ids`` holds the user of each engine seat. Call it after the game row is
    marked as ended and the history appended, in the same unit of work.
    """
    await record_summary(uow, row, summarize_game(history), list(user_ids))


async def record_summary(
    uow: UnitOfWork, row: GameRow, summary: GameSummary, user_ids: list[int]
) -> None:
    """Store an ended game's :class:`GameSummary` and update the totals it touches."""
    start = initial_rating()
    totals: dict[tuple[int, int], PlayerStats] = {}
    if summary.counted:
        keys = [(scope, user) for scope in (row.chat_id, ALL_CHATS) for user in user_ids]
        totals = await uow.stats.lock_player_stats(keys, start.mu, start.sigma)
    result = GameResult(
        game_id=row.id,
        chat_id=row.chat_id,
        ended_at=row.ended_at,
        end_reason=summary.reason.value,
        players=len(user_ids),
        flips=summary.flips,
        operations=summary.operations,
        counted=summary.counted,
        rated=summary.rated,
        winner_ids=[user_ids[seat] for seat in summary.winners],
    )
    ratings: dict[int, list[Rating]] = {}
    if summary.rated:
        for scope in (row.chat_id, ALL_CHATS):
            before = [_rating_of(totals[(scope, user)]) for user in user_ids]
            ratings[scope] = rate_game(before, summary.places)
    await uow.stats.add_result(result, _player_results(row, summary, user_ids, ratings))
    if not summary.counted:
        return
    for scope in (row.chat_id, ALL_CHATS):
        reactions = await uow.stats.reaction_times(
            user_ids, None if scope == ALL_CHATS else row.chat_id
        )
        for seat, user in enumerate(user_ids):
            stats = totals[(scope, user)]
            _add_figures(stats, summary, seat)
            times = reactions[user]
            stats.timed_calls = len(times)
            stats.median_reaction_ms = median_ms(times)
            stats.best_reaction_ms = min(times) if times else None
            stats.last_game_id = row.id
            if scope in ratings:
                _set_rating(stats, ratings[scope][seat])
    await uow.flush()


def _player_results(
    row: GameRow, summary: GameSummary, user_ids: list[int], ratings: dict[int, list[Rating]]
) -> list[GamePlayerResult]:
    chat = ratings.get(row.chat_id)
    everywhere = ratings.get(ALL_CHATS)
    results = []
    for seat, user in enumerate(user_ids):
        figures = summary.seats[seat]
        walked = figures.walked_away
        results.append(
            GamePlayerResult(
                game_id=row.id,
                user_id=user,
                seat=seat,
                place=summary.places[seat],
                won=summary.won(seat),
                walked_away=walked.value if walked else None,
                snaps_won=figures.snaps_won,
                pots_won=figures.pots_won,
                ties=figures.ties,
                wrong_calls=figures.wrong_calls,
                cards_won=figures.cards_won,
                chat_mu=chat[seat].mu if chat else None,
                chat_sigma=chat[seat].sigma if chat else None,
                global_mu=everywhere[seat].mu if everywhere else None,
                global_sigma=everywhere[seat].sigma if everywhere else None,
            )
        )
    return results


def _rating_of(stats: PlayerStats) -> Rating:
    return Rating(stats.rating_mu, stats.rating_sigma)


def _set_rating(stats: PlayerStats, rating: Rating) -> None:
    stats.rating_mu = rating.mu
    stats.rating_sigma = rating.sigma
    stats.rating_ordinal = rating.ordinal
    stats.rated_games += 1


def _add_figures(stats: PlayerStats, summary: GameSummary, seat: int) -> None:
    figures = summary.seats[seat]
    stats.games += 1
    stats.wins += summary.won(seat)
    stats.snaps_won += figures.snaps_won
    stats.pots_won += figures.pots_won
    stats.ties += figures.ties
    stats.wrong_calls += figures.wrong_calls
    stats.cards_won += figures.cards_won
    stats.afks += figures.walked_away is LeaveReason.AFK
