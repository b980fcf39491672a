"""What /stats and /history say: one block when every game was here, every word translated."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from telesnap.bot.render.history import render_game_line
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.stats import render_player_stats
from telesnap.services.stats.views import Figures, GameLine, PlayerStatsView

HERE = Figures(
    games=2,
    wins=2,
    snaps_won=3,
    pots_won=0,
    ties=0,
    wrong_calls=1,
    cards_won=20,
    afks=0,
    timed_calls=3,
    median_reaction_ms=400,
    best_reaction_ms=300,
    rated_games=2,
    rating=1093.0,
    mu=26.0,
    sigma=7.0,
)


def stats_text(chat: Figures, everywhere: Figures | None) -> str:
    view = PlayerStatsView(1, "Ann", chat, everywhere, (), (), (), min_games_to_plot=2)
    return render_player_stats(view, translator("en"))


def test_every_game_played_here_is_one_block_even_where_the_all_chats_rating_differs() -> None:
    # Reckoned against the opponents' ratings in all chats, the same two wins rate higher.
    everywhere = dataclasses.replace(HERE, rating=1104.0, mu=26.5)
    text = stats_text(HERE, everywhere)
    assert "This chat and all chats" in text
    assert "<b>All chats</b>" not in text
    assert "rating 1093 (1104 in all chats)" in text


def test_every_figure_the_same_is_one_block_with_one_rating() -> None:
    text = stats_text(HERE, dataclasses.replace(HERE, mu=25.5))  # a hidden figure differs
    assert "This chat and all chats" in text
    assert "in all chats)" not in text
    assert "rating 1093" in text


def test_games_played_elsewhere_too_are_two_blocks() -> None:
    everywhere = dataclasses.replace(HERE, games=3, rated_games=3, rating=1110.0)
    text = stats_text(HERE, everywhere)
    assert "This chat and all chats" not in text
    assert "<b>This chat</b>:" in text
    assert "<b>All chats</b>:" in text


def test_a_stopped_game_in_the_history_is_said_in_the_chats_language() -> None:
    stopped = GameLine(
        game_id=7,
        started_at=datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
        ended_at=datetime(2026, 12, 1, 10, 5, tzinfo=UTC),
        players=("Ann", "Bob"),
        winners=(),
        end_reason="abandoned",
        flips=4,
        operations=9,
        rated=False,
    )
    spanish = render_game_line(stopped, translator("es"))
    assert "abandoned" not in spanish
    assert "detenida: nadie ganó" in spanish
    assert "stopped: nobody won" in render_game_line(stopped, translator("en"))


def test_stats_in_a_private_chat_show_all_chats_without_a_line_about_this_chat() -> None:
    view = PlayerStatsView(1, "Ann", None, HERE, (), (), (), min_games_to_plot=2)
    text = render_player_stats(view, translator("en"), private=True)
    assert "<b>All chats</b>:" in text
    assert "this chat" not in text.lower()
    in_a_group = render_player_stats(view, translator("en"))
    assert "No finished games in this chat yet." in in_a_group


def test_stats_in_a_private_chat_before_any_game_say_where_snap_is_played() -> None:
    view = PlayerStatsView(1, "Ann", None, None, (), (), (), min_games_to_plot=2)
    text = render_player_stats(view, translator("en"), private=True)
    assert "No finished games yet: Snap is played in groups." in text
    assert "this chat" not in text.lower()


def test_a_stayer_whose_games_were_all_walkovers_is_told_why_none_counts() -> None:
    """A game the others walked out of is not one of the stayer's games: not "no finished
    games", which they have, but why none counts."""
    walkovers = dataclasses.replace(HERE, games=0, wins=0, rated_games=0, cards_won=12)
    text = stats_text(walkovers, None)
    assert "No finished games" not in text
    assert "No game counts here yet: one the others walked out of does not count." in text
