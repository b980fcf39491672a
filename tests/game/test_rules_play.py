"""Turns, turning over, races blocking play, running out and leaving (R4, R5, R16-R19)."""

from __future__ import annotations

import pytest

from telesnap.game import (
    CallKind,
    CallVerdict,
    LeaveReason,
    NotInGameError,
    NotYourTurnError,
    PlayerLeft,
    PlayerOut,
    PlayerOutError,
    RaceInProgressError,
    SeatStatus,
    parse_card,
    parse_cards,
)

from .helpers import call, deal_piles, face_down, face_up, flip_turns


def test_r4_a_flip_moves_the_top_card_face_up_and_passes_the_turn() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    op = game.flip(0)
    assert op.card == parse_card("K♣")
    assert not op.turned_over
    assert (face_down(game, 0), face_up(game, 0)) == ("7♠", "K♣")
    assert game.turn == 1


def test_r4_only_the_player_whose_turn_it_is_may_flip() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    game.flip(0)
    with pytest.raises(NotYourTurnError, match="It is not your turn to flip"):
        game.flip(0)


def test_r5_an_empty_face_down_pile_is_turned_over_without_shuffling() -> None:
    game = deal_piles(["2♠ 5♠", "3♥ 4♥"], dealer=1)
    flip_turns(game, 4)
    assert (face_down(game, 0), face_up(game, 0)) == ("", "2♠ 5♠")
    op = game.flip(0)
    # The face-up pile turned over: its bottom card (flipped first) is now on top.
    assert op.turned_over
    assert op.card == parse_card("2♠")
    assert (face_down(game, 0), face_up(game, 0)) == ("5♠", "2♠")


def test_r16_nothing_but_calls_while_a_race_is_open() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2)
    flip_turns(game, 5)  # 7♠ and 7♥ show
    call(game, 2)
    assert game.is_race_open
    for action in (
        lambda: game.flip(game.turn),
        lambda: game.remove(0),
        game.end_by_limit,
    ):
        with pytest.raises(RaceInProgressError, match="Wait: a Snap race is being decided"):
            action()
    assert call(game, 0, at_ms=30).verdict is CallVerdict.PENDING
    game.resolve_race(tie_window_ms=10)
    game.flip(game.turn)


def test_r17_after_a_snap_the_player_after_the_last_flipper_plays() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2)
    flip_turns(game, 5)  # seat 1 flipped last
    call(game, 0)
    game.resolve_race(tie_window_ms=100)
    assert game.turn == 2


def test_r17_an_out_player_is_skipped_when_play_continues() -> None:
    # Seat 3 holds only 7♥. Seat 2 matches it with 7♣ and seat 0 wins both piles:
    # seat 3 is out, so after seat 2 (the last flipper) comes seat 0.
    game = deal_piles(["3♣ 9♦", "2♦ 8♠", "4♠ 7♣", "7♥"], dealer=3)
    flip_turns(game, 7)
    assert game.matched_seats() == (2, 3)
    call(game, 0)
    game.resolve_race(tie_window_ms=100)
    assert game.seats[3].status is SeatStatus.OUT
    assert game.turn == 0


def test_r18_a_player_with_no_cards_is_out_and_can_do_nothing() -> None:
    # Seat 0 holds only 7♠; seat 1 wins it with 7♥.
    game = deal_piles(["7♠", "3♥ 7♥", "4♣ 5♣"], dealer=0)
    flip_turns(game, 4)
    call(game, 1)
    game.resolve_race(tie_window_ms=100)
    assert game.history[-1] == PlayerOut(0)
    assert game.seats[0].status is SeatStatus.OUT
    assert game.card_counts() == (0, 3, 2)
    with pytest.raises(PlayerOutError, match="You have no cards left"):
        game.flip(0)
    with pytest.raises(PlayerOutError, match="You have no cards left"):
        call(game, 0)
    with pytest.raises(PlayerOutError, match="already out"):
        game.remove(0)
    # Turn order skips seat 0 from now on.
    assert [game.flip(game.turn).seat for _ in range(4)] == [2, 1, 2, 1]


def test_r18_paying_your_last_card_as_a_penalty_puts_you_out() -> None:
    game = deal_piles(["2♠ 5♠", "3♥", "4♦"], dealer=2)
    flip_turns(game, 1)  # 2♠; seat 1 still holds 3♥ face down
    game.flip(1)
    # Seat 2 calls with nothing matching: its only card goes to seat 1, who flipped last.
    assert call(game, 2).verdict is CallVerdict.WRONG
    assert game.seats[2].status is SeatStatus.OUT
    assert face_down(game, 1) == "4♦"


def test_r19_a_leavers_cards_are_dealt_to_the_others_starting_on_their_left() -> None:
    game = deal_piles(["6♥ 7♥ 8♥ 9♥ 10♥", "4♠ 5♠ A♠ 2♠ 3♠", "9♣ 10♣ J♣ Q♣ K♣"], dealer=2)
    flip_turns(game, 7)  # seat 1 shows 4♠ 5♠ and it is seat 1's turn
    assert game.turn == 1
    version = game.board_version
    op = game.remove(1, LeaveReason.AFK)
    # Face-down from the top, then the face-up pile turned over; seat 2 first, then seat 0.
    assert op == PlayerLeft(
        1,
        LeaveReason.AFK,
        tuple(zip([2, 0, 2, 0, 2], parse_cards("A♠ 2♠ 3♠ 4♠ 5♠"), strict=True)),
    )
    assert face_down(game, 0) == "9♥ 10♥ 2♠ 4♠"
    assert face_down(game, 2) == "J♣ Q♣ K♣ A♠ 3♠ 5♠"
    assert game.seats[1].status is SeatStatus.LEFT
    assert game.turn == 2
    assert game.board_version == version + 1  # 5♠ no longer shows
    with pytest.raises(NotInGameError, match="You are not playing in this game"):
        game.flip(1)
    with pytest.raises(NotInGameError, match="You are not playing in this game"):
        game.call(1, CallKind.SNAP, stamp_ns=0, sequence=0, seen_version=0)
    with pytest.raises(NotInGameError, match="That player is not in this game"):
        game.remove(1)
    assert sum(game.card_counts()) == 15
