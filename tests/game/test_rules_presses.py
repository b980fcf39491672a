"""A button counts once (R28): repeated presses of one button on one board change nothing."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given

from telesnap.game import (
    CallKind,
    CallVerdict,
    Card,
    Game,
    NotYourTurnError,
    RepeatedPressError,
    SnapError,
)

from .helpers import MS, call, deal_piles, flip_turns, state_without_history
from .test_properties import FAST, dealt_games, play_steps, steps

SNAP, SNAP_POT = CallKind.SNAP, CallKind.SNAP_POT


def nothing_showing() -> Game:
    """Three players show K♣, 2♦ and 3♣ (seat 2 flipped last): no call is correct."""
    game = deal_piles(["K♣ 7♠ 5♦ 4♠", "2♦ 7♥ 6♦ 4♥", "3♣ 9♦ 8♦ 4♦"], dealer=2)
    flip_turns(game, 3)
    assert not game.is_snap_showing()
    return game


def test_r28_ten_presses_of_snap_on_a_board_with_no_match_cost_one_card() -> None:
    game = nothing_showing()
    counts = game.card_counts()
    version = game.board_version
    assert call(game, 0, at_ms=0, seen_version=version).verdict is CallVerdict.WRONG
    after_one = copy.deepcopy(state_without_history(game))
    for press in range(1, 10):
        with pytest.raises(RepeatedPressError):
            call(game, 0, at_ms=press * 10, seen_version=version)
    assert state_without_history(game) == after_one
    assert game.card_counts()[0] == counts[0] - 1


def test_r28_another_button_or_a_newer_board_is_a_new_press() -> None:
    game = nothing_showing()
    counts = game.card_counts()
    call(game, 0, SNAP)
    call(game, 0, SNAP_POT)  # the other button of the same board: a call of its own
    assert game.card_counts()[0] == counts[0] - 2
    game.flip(game.turn)
    assert not game.is_snap_showing()
    assert call(game, 0, SNAP).verdict is CallVerdict.WRONG  # a new board
    assert game.card_counts()[0] == counts[0] - 3


def test_r28_a_winner_pressing_the_old_board_again_after_the_race_is_refused() -> None:
    game = deal_piles(["K♣ 7♠ 5♦ 7♣", "2♦ 7♥ 6♦ 9♠", "3♣ 9♦ 8♦ 9♣"], dealer=2)
    flip_turns(game, 5)
    version = game.board_version
    assert call(game, 2, at_ms=0).verdict is CallVerdict.PENDING
    game.resolve_race(tie_window_ms=100)
    with pytest.raises(RepeatedPressError):
        call(game, 2, at_ms=40, seen_version=version)
    # Someone who had not pressed it is told they were too slow (R14).
    assert call(game, 1, at_ms=40, seen_version=version).verdict is CallVerdict.TOO_SLOW


def test_r28_a_flip_button_of_an_older_board_flips_for_a_player_whose_turn_has_come() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2)
    first = game.board_version
    game.flip(0, seen_version=first)
    shown = game.board_version  # the board the others see while the next waits
    game.flip(1, seen_version=shown)
    assert game.turn == 2
    # Seat 2 has not flipped since that board: its Flip acts on the game as it is now.
    assert game.flip(2, seen_version=shown).seat == 2
    assert game.turn == 0


def test_r28_a_flip_button_pressed_again_after_its_flip_counts_once() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    shown = game.board_version
    game.flip(0, seen_version=shown)
    with pytest.raises(NotYourTurnError):
        game.flip(0, seen_version=shown)
    game.flip(1, seen_version=shown)  # seat 1 had not flipped since that board
    before = copy.deepcopy(state_without_history(game))
    with pytest.raises(RepeatedPressError):  # seat 0 is on turn again, but flipped since
        game.flip(0, seen_version=shown)
    assert state_without_history(game) == before
    assert game.flip(0, seen_version=game.board_version).seat == 0


def test_r28_a_skipped_player_pressing_the_board_of_the_skipped_turn_counts_once() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥", "3♣ 9♦"], dealer=2)
    shown = game.board_version
    game.skip(0)
    game.flip(1, seen_version=shown)
    game.skip(2)
    with pytest.raises(RepeatedPressError):  # that board was shown before seat 0's skip
        game.flip(0, seen_version=shown)
    assert game.flip(0, seen_version=game.board_version).seat == 0


def test_r28_the_current_board_flips_for_the_player_on_turn_even_after_a_round_of_skips() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    shown = game.board_version
    game.skip(0)
    game.skip(1)  # the board does not change when turns are skipped
    assert game.board_version == shown
    assert game.flip(0, seen_version=shown).seat == 0


@FAST
@given(dealt_games(), steps)
def test_r28_any_press_accepted_once_is_refused_the_second_time_and_changes_nothing(
    dealt: tuple[Game, list[Card]], chosen_steps: list[tuple[int, int, int]]
) -> None:
    game, deck = dealt
    play_steps(game, deck, chosen_steps)
    stamp = 10_000 * MS
    for seat in range(len(game.seats)):
        for kind in CallKind:
            version = game.board_version
            try:
                game.call(seat, kind, stamp_ns=stamp, sequence=0, seen_version=version)
            except SnapError:
                continue
            before = copy.deepcopy(state_without_history(game))
            with pytest.raises(SnapError):
                game.call(seat, kind, stamp_ns=stamp + MS, sequence=1, seen_version=version)
            assert state_without_history(game) == before
    if len(game.active_seats()) > 1:
        seat, version = game.turn, game.board_version
        try:
            game.flip(seat, seen_version=version)
        except SnapError:
            return
        with pytest.raises(SnapError):
            game.flip(seat, seen_version=version)
