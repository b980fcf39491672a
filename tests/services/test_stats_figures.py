"""Final standings and the anti-pumping rule, on games built with the engine."""

from __future__ import annotations

from telesnap.game import EndReason, Game, LeaveReason, parse_cards
from telesnap.services.stats.figures import initial_rating, rate_game, summarize_game

DECK = parse_cards("2♠ 3♠ 4♠ 5♠ 6♠ 7♠ 8♠ 9♠ 10♠ J♠ Q♠ K♠ A♠")


def dealt(players: int) -> Game:
    game = Game()
    game.deal(players, dealer=players - 1, deck=DECK)
    return game


def test_afk_players_rank_last_and_leavers_below_those_who_stayed() -> None:
    game = dealt(4)
    game.remove(3, LeaveReason.AFK)
    game.remove(1, LeaveReason.LEFT)
    game.flip(game.turn)
    game.end_by_limit()
    summary = summarize_game(game.history)
    assert summary.reason is EndReason.LIMIT
    assert summary.rated
    assert summary.winners == (0,)  # 7 cards against 6 when the limit ends it
    winner, other = 0, 2
    assert summary.places[winner] == 1
    assert summary.places[other] == 2
    assert (summary.places[1], summary.places[3]) == (3, 4)
    assert summary.won(winner)
    assert not summary.won(1)
    after = rate_game([initial_rating()] * 4, summary.places)
    assert after[3].mu < after[1].mu < after[other].mu < after[winner].mu


def test_a_walkover_gives_no_win_and_no_rating() -> None:
    game = dealt(2)
    game.remove(1, LeaveReason.AFK)
    summary = summarize_game(game.history)
    assert summary.winners == (0,)
    assert summary.counted
    assert not summary.contested
    assert not summary.rated
    assert not summary.won(0)
    assert not summary.played_by(0), "the one who stayed neither wins nor loses it"
    assert summary.played_by(1), "walking away is a game and a loss"
    assert summary.seats[1].walked_away is LeaveReason.AFK


def test_abandoned_games_do_not_count() -> None:
    game = dealt(3)
    game.flip(game.turn)
    game.abandon()
    summary = summarize_game(game.history)
    assert not summary.counted
    assert not summary.rated
    assert summary.flips == 1
