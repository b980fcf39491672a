"""How games end: all the cards, a stuck pot, shared wins, limits, abandon (R19-R24)."""

from __future__ import annotations

import pytest

from telesnap.game import (
    CallKind,
    EndReason,
    GameEnded,
    GameOverError,
    Outcome,
    PlayerOut,
    SetupError,
    parse_cards,
)

from .helpers import call, deal_piles, flip_turns, pot


def test_r20_the_player_who_holds_every_card_wins() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    flip_turns(game, 4)
    call(game, 1)
    game.resolve_race(tie_window_ms=100)
    assert game.history[-2:] == [
        PlayerOut(0),
        GameEnded((1,), EndReason.ALL_CARDS, (0, 4)),
    ]
    assert game.outcome == Outcome((1,), EndReason.ALL_CARDS)


def test_r20_a_pot_that_can_never_be_matched_is_left_out_of_the_win() -> None:
    # Four players each flip a ten: two ties put all four tens in the pot, where no
    # card can ever match them again. Seat 0 then wins every other card.
    game = deal_piles(["10♠ 2♠", "10♥ 2♥", "10♦ 3♦", "10♣ 3♣"], dealer=3)
    flip_turns(game, 2)
    call(game, 0, at_ms=0)
    call(game, 1, at_ms=20)
    game.resolve_race(tie_window_ms=100)
    flip_turns(game, 2)
    call(game, 2, at_ms=0)
    call(game, 3, at_ms=20)
    game.resolve_race(tie_window_ms=100)
    assert pot(game) == "10♠ 10♥ 10♦ 10♣"
    flip_turns(game, 2)  # 2♠ 2♥
    call(game, 0)
    game.resolve_race(tie_window_ms=100)
    flip_turns(game, 2)  # 3♦ 3♣
    call(game, 0)
    game.resolve_race(tie_window_ms=100)
    assert game.outcome == Outcome((0,), EndReason.ALL_CARDS)
    assert game.card_counts() == (4, 0, 0, 0)
    assert len(game.pot) == 4


def test_r19_when_the_last_opponent_leaves_the_other_player_wins() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 8♥"], dealer=1)
    game.flip(0)
    game.remove(1)
    assert game.outcome == Outcome((0,), EndReason.ALL_CARDS)
    assert game.card_counts() == (4, 0)


def test_r21_when_everyones_cards_go_into_the_pot_at_once_they_share_the_win() -> None:
    game = deal_piles(["7♠", "7♥"], dealer=1)
    flip_turns(game, 2)
    call(game, 0, at_ms=0)
    call(game, 1, at_ms=10)
    game.resolve_race(tie_window_ms=100)
    assert game.history[-3:] == [
        PlayerOut(0),
        PlayerOut(1),
        GameEnded((0, 1), EndReason.ALL_CARDS, (0, 0)),
    ]
    assert pot(game) == "7♠ 7♥"


def test_r21_every_player_emptied_by_the_tie_shares_the_win_callers_or_not() -> None:
    game = deal_piles(["7♠", "7♥", "7♦"], dealer=2)
    flip_turns(game, 3)
    call(game, 0, at_ms=0)
    call(game, 2, at_ms=10)
    game.resolve_race(tie_window_ms=100)
    assert game.outcome == Outcome((0, 1, 2), EndReason.ALL_CARDS)


def test_r21_a_tie_that_leaves_one_player_with_cards_is_that_players_win() -> None:
    game = deal_piles(["7♠", "7♥", "9♦ 4♣"], dealer=1)
    flip_turns(game, 2)  # seat 2: 9♦, seat 0: 7♠ ... seat 1 flips 7♥ next
    game.flip(1)
    call(game, 0, at_ms=0)
    call(game, 1, at_ms=10)
    game.resolve_race(tie_window_ms=100)
    assert game.outcome == Outcome((2,), EndReason.ALL_CARDS)


def test_r22_at_the_limit_the_most_cards_wins() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2)
    flip_turns(game, 5)
    call(game, 2)
    game.resolve_race(tie_window_ms=100)
    assert game.can_end_by_limit()
    op = game.end_by_limit()
    assert op == GameEnded((2,), EndReason.LIMIT, (1, 1, 7))


def test_r22_at_the_limit_equal_counts_share_the_win_and_the_pot_counts_for_nobody() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2)
    flip_turns(game, 5)
    call(game, 0, at_ms=0)
    call(game, 1, at_ms=5)
    game.resolve_race(tie_window_ms=100)  # 4 cards into the pot
    op = game.end_by_limit()
    assert op.card_counts == (1, 1, 3)
    assert op.winners == (2,)
    game = deal_piles(["K♣ 7♠", "2♦ 8♥"], dealer=1)
    game.flip(0)
    assert game.end_by_limit().winners == (0, 1)


def test_r23_an_abandoned_game_has_no_winner_even_mid_race() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    flip_turns(game, 4)
    call(game, 0)
    op = game.abandon()
    assert op == GameEnded((), EndReason.ABANDONED, (2, 2))
    assert game.outcome == Outcome((), EndReason.ABANDONED)
    assert not game.is_race_open


def test_r24_nothing_can_be_done_once_the_game_is_over() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 8♥"], dealer=1)
    game.abandon()
    actions = [
        lambda: game.flip(game.turn),
        lambda: game.call(0, CallKind.SNAP, stamp_ns=0, sequence=0, seen_version=0),
        lambda: game.resolve_race(tie_window_ms=0),
        lambda: game.remove(0),
        game.end_by_limit,
        game.abandon,
    ]
    for action in actions:
        with pytest.raises(GameOverError, match="The game is over"):
            action()
    with pytest.raises(SetupError, match="already been dealt"):
        game.deal(2, dealer=0, deck=parse_cards("A♠ 2♠"))
