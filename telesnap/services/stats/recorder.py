"""Recording an ended game's stats in the transaction that stores its last operations.

Being in the history's unit of work, the figures can never disagree with it. The cost does
not grow with the players' past: it reads the game's own history, the players' totals and
a few reaction buckets around each median (:mod:`.reactions`), never a past game.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...game import LeaveReason, Operation
from ...storage.models import ALL_CHATS, GamePlayerResult, GameResult, PlayerStats
from ...storage.models import Game as GameRow
from ...storage.uow import UnitOfWork
from .figures import (
    GameSummary,
    Rating,
    initial_rating,
    rate_game,
    summarize_game,
)
from .reactions import ReactionCursor, advance, anchor_of, window_size

__all__ = ["record_game_result", "record_summary"]


async def record_game_result(
    uow: UnitOfWork, row: GameRow, history: Sequence[Operation], user_ids: Sequence[int]
) -> None:
    """Store the stats of ``row``'s game, just ended by ``history`` (``user_ids``: by seat).

    Call it in the same unit of work, after the row is marked ended and the history appended.
    """
    await record_summary(uow, row, summarize_game(history), list(user_ids))


async def record_summary(
    uow: UnitOfWork, row: GameRow, summary: GameSummary, user_ids: list[int]
) -> None:
    """Store an ended game's :class:`GameSummary` and update the totals it touches.

    A player who left the game, then erased their data, gets no figures, rating or reaction
    times back from it: their seat stays in the result, with no rating.
    """
    start = initial_rating()
    erased = {
        player.user_id
        for player in await uow.games.list_players(row.id)
        if player.shown_name is not None
    }
    kept = [user for user in user_ids if user not in erased]
    totals: dict[tuple[int, int], PlayerStats] = {}
    if summary.counted:
        keys = [(scope, user) for scope in (row.chat_id, ALL_CHATS) for user in kept]
        totals = await uow.stats.lock_player_stats(keys, start.mu, start.sigma, start.points)
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
            before = [
                start if user in erased else _rating_of(totals[(scope, user)]) for user in user_ids
            ]
            ratings[scope] = rate_game(before, summary.places)
    results = _player_results(row, summary, user_ids, ratings, erased)
    await uow.stats.add_result(result, results)
    if not summary.counted:
        return
    game_times = await uow.stats.game_reaction_times(row.id)
    new_times = {
        (scope, user): game_times[user]
        for scope in (row.chat_id, ALL_CHATS)
        for user in kept
        if user in game_times
    }
    await uow.stats.add_reaction_times(new_times)
    # Every read before any total changes, so no autoflush writes a row twice.
    cursors = await _moved_cursors(uow, totals, new_times)
    for scope in (row.chat_id, ALL_CHATS):
        for seat, user in enumerate(user_ids):
            if user in erased:
                continue
            stats = totals[(scope, user)]
            _add_figures(stats, summary, seat)
            if (scope, user) in cursors:
                _set_reaction_figures(stats, cursors[(scope, user)])
            stats.last_game_id = row.id
            if scope in ratings:
                _set_rating(stats, ratings[scope][seat])
    await uow.flush()


async def _moved_cursors(
    uow: UnitOfWork,
    totals: dict[tuple[int, int], PlayerStats],
    new_times: dict[tuple[int, int], list[int]],
) -> dict[tuple[int, int], ReactionCursor]:
    """Each caller's reaction figures with their ``new_times`` (already counted) added."""
    cursors = {key: _cursor_of(totals[key]) for key in new_times}
    anchors = {
        key: (anchor_of(cursors[key], times), window_size(len(times)))
        for key, times in new_times.items()
    }
    windows = await uow.stats.reaction_windows(anchors)
    return {key: advance(cursors[key], times, *windows[key]) for key, times in new_times.items()}


def _cursor_of(stats: PlayerStats) -> ReactionCursor:
    return ReactionCursor(
        calls=stats.timed_calls,
        lower_median_ms=stats.lower_median_ms,
        faster_calls=stats.calls_faster_than_lower_median,
        median_ms=stats.median_reaction_ms,
        best_ms=stats.best_reaction_ms,
    )


def _set_reaction_figures(stats: PlayerStats, cursor: ReactionCursor) -> None:
    stats.timed_calls = cursor.calls
    stats.lower_median_ms = cursor.lower_median_ms
    stats.calls_faster_than_lower_median = cursor.faster_calls
    stats.median_reaction_ms = cursor.median_ms
    stats.best_reaction_ms = cursor.best_ms


def _player_results(
    row: GameRow,
    summary: GameSummary,
    user_ids: list[int],
    ratings: dict[int, list[Rating]],
    erased: set[int],
) -> list[GamePlayerResult]:
    results = []
    for seat, user in enumerate(user_ids):
        chat = None if user in erased else ratings.get(row.chat_id)
        everywhere = None if user in erased else ratings.get(ALL_CHATS)
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
                chat_points=chat[seat].points if chat else None,
                global_mu=everywhere[seat].mu if everywhere else None,
                global_sigma=everywhere[seat].sigma if everywhere else None,
                global_points=everywhere[seat].points if everywhere else None,
            )
        )
    return results


def _rating_of(stats: PlayerStats) -> Rating:
    return Rating(stats.rating_mu, stats.rating_sigma, stats.rating_points)


def _set_rating(stats: PlayerStats, rating: Rating) -> None:
    stats.rating_mu = rating.mu
    stats.rating_sigma = rating.sigma
    stats.rating_ordinal = rating.ordinal
    stats.rating_points = rating.points
    stats.rated_games += 1


def _add_figures(stats: PlayerStats, summary: GameSummary, seat: int) -> None:
    figures = summary.seats[seat]
    stats.games += summary.played_by(seat)
    stats.wins += summary.won(seat)
    stats.snaps_won += figures.snaps_won
    stats.pots_won += figures.pots_won
    stats.ties += figures.ties
    stats.wrong_calls += figures.wrong_calls
    stats.cards_won += figures.cards_won
    stats.afks += figures.walked_away is LeaveReason.AFK
