"""What /stats, /leaderboard and /history show of stored games, as the bot renders them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.bot.render.charts import stats_figure
from telesnap.bot.render.history import render_history
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.stats import (
    leaderboard_rows,
    render_leaderboard,
    render_player_stats,
)
from telesnap.game import EndReason
from telesnap.services.privacy import FORMER_PLAYER
from telesnap.services.stats.figures import GameSummary, SeatFigures
from telesnap.services.stats.recorder import record_summary
from telesnap.services.stats.service import StatsService
from telesnap.services.stats.views import PlayerStatsView, Ranking
from telesnap.storage.models.base import utc_now
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

Sessions = async_sessionmaker[AsyncSession]
KEPT = -720
"""A group that keeps its figures to itself (``shared_stats`` off, the default)."""
ELSEWHERE = -721
NAMES = {1: "Ann", 2: "Bob", 3: "Cid", 4: "Dee"}
ANN, BOB, CID, DEE = NAMES
EN = translator("en")


async def record_game(
    sessions: Sessions,
    chat_id: int,
    winner: int,
    loser: int,
    *,
    both_stayed: bool = True,
    lasted: timedelta = timedelta(minutes=4, seconds=5),
) -> None:
    """An ended game of two players; unless both stayed, it counts but is not rated."""
    async with UnitOfWork(sessions) as uow:
        for user_id in (winner, loser):
            await uow.users.upsert(user_id, NAMES[user_id])
        await uow.chats.upsert(chat_id, "group")
        row = await uow.games.add(chat_id, 0, creator_id=winner)
        for user_id in (winner, loser):
            await uow.games.add_player(row.id, user_id)
        row.status = "finished"
        row.ended_at = utc_now()
        row.started_at = row.ended_at - lasted
        summary = GameSummary(
            reason=EndReason.LIMIT,
            winners=(0,),
            flips=30,
            seats=(SeatFigures(0, snaps_won=2), SeatFigures(1)),
            places=(1, 2),
            operations=40,
            contested=both_stayed,
        )
        await record_summary(uow, row, summary, [winner, loser])


def rating_legend(view_ratings: tuple[float, ...], chat_ratings: tuple[float, ...]) -> list[str]:
    figure = stats_figure([(300, 2)], view_ratings, chat_ratings, EN)
    legend = figure.axes[1].get_legend()
    return [text.get_text() for text in legend.get_texts()]


async def test_a_group_keeping_its_figures_labels_the_rating_line_this_chat(
    session_factory: Sessions,
) -> None:
    """Ann also played elsewhere: her one line here is this chat's, not all chats'."""
    await record_game(session_factory, KEPT, ANN, BOB)
    await record_game(session_factory, KEPT, BOB, ANN)
    await record_game(session_factory, ELSEWHERE, CID, ANN)
    view = await StatsService(UnitsOfWork(session_factory)).player(KEPT, ANN, "Ann")
    assert view.can_plot
    caption = render_player_stats(view, EN)
    assert "<b>This chat</b>: 2 games" in caption
    assert "all chats" not in caption.lower()
    # As the /stats handler draws it, from the view.
    figure = stats_figure(
        view.reaction_counts,
        view.ratings,
        view.chat_ratings,
        EN,
        ratings_from=view.ratings_from,
        chat_rating_games=view.chat_rating_games,
    )
    legend = figure.axes[1].get_legend()
    assert [text.get_text() for text in legend.get_texts()] == ["this chat"]
    (line,) = figure.axes[1].get_lines()
    assert list(line.get_xdata()) == [1, 2]


async def test_a_group_sharing_its_figures_still_draws_both_lines(
    session_factory: Sessions,
) -> None:
    await record_game(session_factory, KEPT, ANN, BOB)
    await record_game(session_factory, KEPT, BOB, ANN)
    await record_game(session_factory, ELSEWHERE, CID, ANN)
    async with UnitOfWork(session_factory) as uow:
        await uow.settings.save_values(KEPT, 0, {"shared_stats": True})
    view = await StatsService(UnitsOfWork(session_factory)).player(KEPT, ANN, "Ann")
    assert len(view.ratings) == 3
    assert rating_legend(view.ratings, view.chat_ratings) == ["all chats", "this chat"]


async def test_a_win_nobody_else_stayed_for_is_shown_unrated_in_the_history(
    session_factory: Sessions,
) -> None:
    """Bob left and Ann won alone: /stats counts no win, and /history says why."""
    await record_game(session_factory, KEPT, ANN, BOB, both_stayed=False)
    await record_game(session_factory, KEPT, BOB, ANN)
    service = StatsService(UnitsOfWork(session_factory))
    ann = await service.player(KEPT, ANN, "Ann")
    assert ann.chat is not None
    assert ann.chat.wins == 0
    newer, older = render_history(await service.history(KEPT), EN).split("\n\n")[1:3]
    assert "🏆 <b>Ann</b> (unrated: only one player stayed)" in older
    assert "🏆 <b>Bob</b>" in newer
    assert "unrated" not in newer


@pytest.mark.parametrize("ranking", [Ranking.RATING, Ranking.WINS, Ranking.SNAPS])
async def test_tied_players_share_a_place_on_the_board_and_its_picture(
    session_factory: Sessions, ranking: Ranking
) -> None:
    """Ann and Cid each beat a newcomer once, Bob and Dee each lost once: two ties."""
    await record_game(session_factory, KEPT, ANN, BOB)
    await record_game(session_factory, KEPT, CID, DEE)
    board = await StatsService(UnitsOfWork(session_factory)).leaderboard(KEPT, ranking)
    assert [(entry.position, entry.name) for entry in board.entries] == [
        (1, "Ann"),
        (1, "Cid"),
        (3, "Bob"),
        (3, "Dee"),
    ]
    text = render_leaderboard(board, EN)
    for line in ("1. <b>Ann</b>", "1. <b>Cid</b>", "3. <b>Bob</b>", "3. <b>Dee</b>"):
        assert line in text
    assert [row[:2] for row in leaderboard_rows(board, EN)] == [
        ("1.", "Ann"),
        ("1.", "Cid"),
        ("3.", "Bob"),
        ("3.", "Dee"),
    ]


async def test_players_apart_on_the_board_keep_their_own_places(
    session_factory: Sessions,
) -> None:
    """Ann won twice, Cid once: not a tie, though both lead someone."""
    await record_game(session_factory, KEPT, ANN, BOB)
    await record_game(session_factory, KEPT, ANN, BOB)
    await record_game(session_factory, KEPT, CID, DEE)
    board = await StatsService(UnitsOfWork(session_factory)).leaderboard(KEPT, Ranking.WINS)
    assert [(entry.position, entry.name) for entry in board.entries] == [
        (1, "Ann"),
        (2, "Cid"),
        (3, "Dee"),
        (4, "Bob"),
    ]


async def test_the_history_shows_a_game_past_an_hour_in_hours(session_factory: Sessions) -> None:
    await record_game(session_factory, KEPT, ANN, BOB, lasted=timedelta(hours=3, minutes=31))
    await record_game(session_factory, KEPT, ANN, BOB, lasted=timedelta(minutes=1441))
    await record_game(session_factory, KEPT, ANN, BOB, lasted=timedelta(minutes=4, seconds=5))
    page = await StatsService(UnitsOfWork(session_factory)).history(KEPT)
    short, idle, long = render_history(page, EN).split("\n\n")[1:4]
    assert " · 4:05 · " in short
    assert " · 24:01:00 · " in idle
    assert " · 3:31:00 · " in long


def test_the_stats_of_someone_who_erased_their_data_say_so() -> None:
    """Not "no finished games": they played here, and their figures went with their data."""
    erased = PlayerStatsView(
        user_id=7,
        name=FORMER_PLAYER,
        chat=None,
        everywhere=None,
        reaction_counts=(),
        ratings=(),
        chat_ratings=(),
        min_games_to_plot=2,
    )
    text = render_player_stats(erased, EN)
    assert text.splitlines()[-1] == "This player erased their data: no figures are kept."
    assert "a former player" in text.splitlines()[0]
