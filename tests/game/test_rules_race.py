"""Snap, the race, ties, the Snap Pot, wrong calls and calls on an old board (R6-R15)."""

from __future__ import annotations

import itertools

import pytest

from telesnap.game import (
    Call,
    CallKind,
    CallResult,
    CallVerdict,
    DuplicateCallError,
    Game,
    MatchMode,
    PenaltyPaid,
    SnapError,
    decide_race,
    parse_card,
)

from .helpers import MS, call, deal_piles, face_down, face_up, flip_turns, pot

SNAP_POT = CallKind.SNAP_POT


def sevens_showing() -> Game:
    """Three players; seat 0 shows 7♠ and seat 1 has just flipped 7♥ (seat 2 shows 3♣)."""
    game = deal_piles(["K♣ 7♠ 5♦ 7♣", "2♦ 7♥ 6♦ 9♠", "3♣ 9♦ 8♦ 9♣"], dealer=2)
    flip_turns(game, 5)
    assert game.matched_seats() == (0, 1)
    return game


def pot_of_sevens_matched() -> Game:
    """The 7♠ 7♥ race tied into the pot; later seat 0 flips 7♣, which matches the pot's 7♥."""
    game = sevens_showing()
    call(game, 0, at_ms=0)
    call(game, 2, at_ms=60)
    game.resolve_race(tie_window_ms=100)
    flip_turns(game, 5)  # 9♦, 5♦, 6♦, 8♦, then seat 0 flips 7♣
    assert pot(game) == "K♣ 7♠ 2♦ 7♥"
    assert [str(card) for _, card in game.visible_tops()] == ["7♣", "6♦", "8♦"]
    return game


# -- R6: what a match is ---------------------------------------------------------------


def test_r6_a_match_stays_claimable_until_one_of_its_piles_is_covered() -> None:
    game = sevens_showing()
    game.flip(2)  # 9♦ covers seat 2's 3♣; the sevens still show
    assert game.matched_seats() == (0, 1)
    assert call(game, 0).verdict is CallVerdict.PENDING
    game.resolve_race(tie_window_ms=0)
    game = sevens_showing()
    flip_turns(game, 2)  # seat 0 covers 7♠ with 5♦
    assert not game.is_snap_showing()
    assert call(game, 1).verdict is CallVerdict.WRONG


@pytest.mark.parametrize(
    ("mode", "flips", "matched"),
    [
        (MatchMode.RANK, 5, (0, 1)),  # 7♠ 7♥
        (MatchMode.RANK_AND_COLOUR, 5, ()),  # 7♠ is black, 7♥ red
        (MatchMode.SUIT, 3, (0, 2)),  # K♣ 3♣
    ],
)
def test_r6_the_chats_match_mode_decides_what_matches(
    mode: MatchMode, flips: int, matched: tuple[int, ...]
) -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2, match_mode=mode)
    flip_turns(game, flips)
    assert game.matched_seats() == matched


# -- R7: Snap! ---------------------------------------------------------------------------


def test_r7_any_player_may_snap_and_takes_the_matching_piles_face_down_underneath() -> None:
    game = sevens_showing()
    assert call(game, 2).verdict is CallVerdict.PENDING  # seat 2 owns neither seven
    op = game.resolve_race(tie_window_ms=100)
    assert (op.winners, op.piles, op.cards, op.pot_taken) == ((2,), (0, 1), 4, False)
    assert op.results == (CallResult(2, CallVerdict.WON),)
    assert face_down(game, 2) == "9♦ 8♦ 9♣ K♣ 7♠ 2♦ 7♥"
    assert face_up(game, 0) == face_up(game, 1) == ""


def test_r7_a_three_way_match_gives_the_winner_all_three_piles() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 7♦ 8♦"], dealer=2)
    flip_turns(game, 6)
    call(game, 0)
    assert game.resolve_race(tie_window_ms=100).piles == (0, 1, 2)
    assert face_down(game, 0) == "5♦ K♣ 7♠ 2♦ 7♥ 3♣ 7♦"


# -- R8: the race ------------------------------------------------------------------------


def test_r8_calls_within_the_tie_window_of_the_first_tie_and_the_edge_counts() -> None:
    first = Call(0, CallKind.SNAP, 0, 1)
    at_edge = Call(1, CallKind.SNAP, 100 * MS, 2)
    past_edge = Call(2, CallKind.SNAP, 100 * MS + 1, 3)
    decision = decide_race([past_edge, at_edge, first], tie_window_ms=100)
    assert decision.is_tie
    assert decision.winning_seats == (0, 1)
    assert decision.too_slow == ((past_edge, 101),)


def test_r8_a_zero_tie_window_means_the_earliest_stamp_wins_and_sequence_breaks_equals() -> None:
    later_update = Call(0, CallKind.SNAP, 5 * MS, 9)
    earlier_update = Call(1, CallKind.SNAP, 5 * MS, 8)
    decision = decide_race([later_update, earlier_update], tie_window_ms=0)
    assert decision.winning_seats == (1,)
    assert decision.too_slow == ((later_update, 0),)
    assert not decision.is_tie


def test_r8_the_decision_does_not_depend_on_the_order_calls_are_handled() -> None:
    calls = [
        Call(seat, CallKind.SNAP, stamp * MS, seat) for seat, stamp in enumerate([30, 0, 80, 45])
    ]
    decisions = {decide_race(order, 40) for order in itertools.permutations(calls)}
    assert len(decisions) == 1
    (decision,) = decisions
    assert decision.winning_seats == (1, 0)
    assert [(call.seat, behind) for call, behind in decision.too_slow] == [(3, 45), (2, 80)]


def test_r8_the_game_decides_by_stamp_not_by_arrival() -> None:
    game = sevens_showing()
    call(game, 2, at_ms=80)  # handled first, stamped later
    call(game, 0, at_ms=10)
    op = game.resolve_race(tie_window_ms=50)
    assert op.winners == (0,)
    assert op.results == (CallResult(0, CallVerdict.WON), CallResult(2, CallVerdict.TOO_SLOW, 70))


def test_r8_one_call_per_player_per_race() -> None:
    game = sevens_showing()
    call(game, 0, at_ms=0)
    assert not game.can_call(0, game.board_version, CallKind.SNAP)
    with pytest.raises(DuplicateCallError, match="You have already called; wait for the result"):
        call(game, 0, at_ms=5)


def test_r8_a_negative_tie_window_is_refused() -> None:
    with pytest.raises(SnapError, match="0 ms or more"):
        decide_race([Call(0, CallKind.SNAP, 0, 0)], tie_window_ms=-1)


# -- R9: ties ----------------------------------------------------------------------------


def test_r9_a_tie_sends_the_piles_face_up_into_the_pot_and_play_continues() -> None:
    game = sevens_showing()
    call(game, 0, at_ms=0)
    call(game, 2, at_ms=60)
    op = game.resolve_race(tie_window_ms=100)
    assert op.winners == (0, 2)
    assert op.results == (CallResult(0, CallVerdict.TIED), CallResult(2, CallVerdict.TIED))
    assert pot(game) == "K♣ 7♠ 2♦ 7♥"
    assert game.pot_top == parse_card("7♥")  # one of the matching cards is on top
    assert face_up(game, 0) == face_up(game, 1) == ""
    assert game.turn == 2  # the player after seat 1, who flipped last
    assert game.card_counts() == (2, 2, 4)


# -- R10, R11: Snap Pot! -----------------------------------------------------------------


def test_r10_snap_pot_takes_the_pot_and_every_pile_matching_its_top() -> None:
    game = pot_of_sevens_matched()
    assert game.pot_matched_seats() == (0,)
    assert not game.is_snap_showing()
    call(game, 1, SNAP_POT)
    op = game.resolve_race(tie_window_ms=100)
    assert (op.winners, op.piles, op.pot_taken, op.cards) == ((1,), (0,), True, 6)
    assert pot(game) == ""
    assert face_down(game, 1) == "9♠ K♣ 7♠ 2♦ 7♥ 5♦ 7♣"


def test_r10_snap_is_wrong_when_only_the_pot_matches() -> None:
    game = pot_of_sevens_matched()
    assert call(game, 1).verdict is CallVerdict.WRONG
    assert call(game, 2, SNAP_POT).verdict is CallVerdict.PENDING


def test_r10_snap_pot_is_wrong_when_there_is_no_pot() -> None:
    game = sevens_showing()
    assert call(game, 2, SNAP_POT, at_ms=0).verdict is CallVerdict.WRONG


def test_r11_a_snap_pot_tie_adds_the_matching_piles_to_the_pot() -> None:
    game = pot_of_sevens_matched()
    call(game, 1, SNAP_POT, at_ms=0)
    call(game, 2, SNAP_POT, at_ms=30)
    op = game.resolve_race(tie_window_ms=100)
    assert (op.winners, op.piles, op.pot_taken) == ((1, 2), (0,), False)
    assert pot(game) == "K♣ 7♠ 2♦ 7♥ 5♦ 7♣"
    assert game.pot_top == parse_card("7♣")


# -- R12: Snap and Snap Pot correct at once ----------------------------------------------


def both_calls_correct() -> Game:
    """Seat 0's 7♣ matches the pot; seats 1 and 2 then flip 9♠ and 9♣."""
    game = pot_of_sevens_matched()
    flip_turns(game, 2)
    assert game.pot_matched_seats() == (0,)
    assert game.matched_seats() == (1, 2)
    return game


def test_r12_snap_pot_first_takes_the_pot_and_its_piles_and_the_snap_stays() -> None:
    game = both_calls_correct()
    call(game, 0, SNAP_POT, at_ms=0)
    call(game, 1, CallKind.SNAP, at_ms=5)
    op = game.resolve_race(tie_window_ms=0)
    assert (op.winners, op.piles, op.pot_taken) == ((0,), (0,), True)
    assert op.results[1] == CallResult(1, CallVerdict.TOO_SLOW, 5)
    assert pot(game) == ""
    # The nines were not taken: they can still be snapped on the new board.
    assert game.matched_seats() == (1, 2)
    assert call(game, 1, at_ms=900).verdict is CallVerdict.PENDING


def test_r12_snap_first_takes_the_matching_piles_only() -> None:
    game = both_calls_correct()
    call(game, 0, SNAP_POT, at_ms=5)
    call(game, 1, CallKind.SNAP, at_ms=0)
    op = game.resolve_race(tie_window_ms=0)
    assert (op.winners, op.piles, op.pot_taken, op.cards) == ((1,), (1, 2), False, 6)
    assert pot(game) == "K♣ 7♠ 2♦ 7♥"
    assert game.pot_matched_seats() == (0,)


def test_r12_snap_and_snap_pot_in_the_tie_window_send_all_their_piles_to_the_pot() -> None:
    game = both_calls_correct()
    call(game, 0, SNAP_POT, at_ms=0)
    call(game, 1, CallKind.SNAP, at_ms=5)
    op = game.resolve_race(tie_window_ms=100)
    assert (op.winners, op.piles, op.pot_taken) == ((0, 1), (0, 1, 2), False)
    assert pot(game) == "K♣ 7♠ 2♦ 7♥ 5♦ 7♣ 6♦ 9♠ 3♣ 9♦ 8♦ 9♣"


# -- R13: wrong calls --------------------------------------------------------------------


def nothing_showing() -> Game:
    """Seats show K♣, 2♦, 3♣ (no match); seat 2 flipped last; seat 0 is to flip."""
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2)
    flip_turns(game, 3)
    return game


def test_r13_a_wrong_call_gives_your_top_card_to_the_player_who_flipped_last() -> None:
    game = nothing_showing()
    assert call(game, 0).verdict is CallVerdict.WRONG
    assert game.history[-1] == PenaltyPaid(0, 2, parse_card("7♠"), turned_over=False)
    assert face_down(game, 0) == "5♦"
    assert face_down(game, 2) == "9♦ 8♦ 7♠"


def test_r13_a_wrong_call_by_the_last_flipper_pays_the_player_on_their_right() -> None:
    game = nothing_showing()
    call(game, 2)
    assert game.history[-1] == PenaltyPaid(2, 1, parse_card("9♦"), turned_over=False)
    assert face_down(game, 1) == "7♥ 6♦ 9♦"


def test_r13_a_wrong_call_before_any_flip_pays_the_player_on_the_right() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥", "3♣ 9♦"], dealer=2)
    call(game, 0)
    assert game.history[-1] == PenaltyPaid(0, 2, parse_card("K♣"), turned_over=False)


def test_r13_a_penalty_turns_the_face_up_pile_over_when_the_face_down_pile_is_empty() -> None:
    game = deal_piles(["2♠ 5♠", "3♥ 4♥"], dealer=1)
    flip_turns(game, 4)
    version = game.board_version
    call(game, 0)
    assert game.history[-1] == PenaltyPaid(0, 1, parse_card("2♠"), turned_over=True)
    assert (face_down(game, 0), face_up(game, 0)) == ("5♠", "")
    assert game.board_version == version + 1  # 5♠ no longer shows


def test_r13_without_the_penalty_option_a_wrong_call_costs_nothing() -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦"], dealer=2, wrong_call_penalty=False)
    flip_turns(game, 3)
    counts = game.card_counts()
    assert call(game, 0).verdict is CallVerdict.WRONG
    assert game.card_counts() == counts


@pytest.mark.parametrize("handled_first", [2, 3])
def test_r13_wrong_calls_in_a_race_are_paid_after_it_in_stamp_order(handled_first: int) -> None:
    game = deal_piles(["K♣ 7♠ 5♦", "2♦ 7♥ 6♦", "3♣ 9♦ 8♦", "4♣ 10♦ J♦"], dealer=3)
    flip_turns(game, 6)  # seat 1 flips 7♥ onto the table next to seat 0's 7♠
    call(game, 0, at_ms=0)
    stamps = {2: 10, 3: 20}
    for seat in (handled_first, 5 - handled_first):
        assert call(game, seat, SNAP_POT, at_ms=stamps[seat]).verdict is CallVerdict.WRONG
    assert face_down(game, 2) == "9♦ 8♦"  # nothing paid while the race is open
    game.resolve_race(tie_window_ms=0)
    assert game.history[-2:] == [
        PenaltyPaid(2, 1, parse_card("9♦"), turned_over=False),
        PenaltyPaid(3, 1, parse_card("10♦"), turned_over=False),
    ]
    assert face_down(game, 1) == "6♦ 9♦ 10♦"


# -- R14, R15: too late and too slow -----------------------------------------------------


def test_r14_a_call_on_a_board_that_has_changed_is_too_late_without_penalty() -> None:
    game = sevens_showing()
    seen = game.board_version
    flip_turns(game, 2)  # 9♦, then 5♦ covers 7♠: the match is gone
    counts = game.card_counts()
    op = call(game, 1, seen_version=seen)
    assert (op.verdict, op.behind_ms) == (CallVerdict.TOO_LATE, None)
    assert game.card_counts() == counts
    assert call(game, 2).verdict is CallVerdict.WRONG  # pressed on the current board


def test_r14_a_call_on_the_board_just_raced_for_is_too_slow_by_n_ms() -> None:
    game = sevens_showing()
    seen = game.board_version
    call(game, 0, at_ms=1000)
    game.resolve_race(tie_window_ms=100)
    counts = game.card_counts()
    op = call(game, 1, at_ms=1250, seen_version=seen)
    assert (op.verdict, op.behind_ms) == (CallVerdict.TOO_SLOW, 250)
    assert game.card_counts() == counts


def test_r14_a_call_from_an_old_board_counts_when_a_match_shows_now() -> None:
    game = sevens_showing()
    assert call(game, 2, seen_version=0).verdict is CallVerdict.PENDING


def test_r14_a_button_from_no_board_of_this_game_is_refused() -> None:
    game = sevens_showing()
    with pytest.raises(SnapError, match="does not belong to this game's board"):
        call(game, 2, seen_version=game.board_version + 1)


def test_r15_a_correct_call_outside_the_tie_window_is_too_slow_by_n_ms() -> None:
    game = sevens_showing()
    call(game, 1, at_ms=0)
    call(game, 2, at_ms=150)
    op = game.resolve_race(tie_window_ms=100)
    assert op.winners == (1,)
    assert op.results[1] == CallResult(2, CallVerdict.TOO_SLOW, 150)
    assert game.card_counts()[2] == 4  # seat 2 gains and loses nothing


def test_r13_a_wrong_caller_whose_cards_the_race_took_pays_nothing_and_is_out() -> None:
    # Seat 0 holds only 7♠ and calls "Snap Pot!" (wrong) while seat 1 wins the sevens.
    game = deal_piles(["7♠", "3♥ 7♥", "4♣ 5♣"], dealer=0)
    flip_turns(game, 4)
    call(game, 1, at_ms=0)
    assert call(game, 0, SNAP_POT, at_ms=5).verdict is CallVerdict.WRONG
    game.resolve_race(tie_window_ms=0)
    assert not any(isinstance(op, PenaltyPaid) for op in game.history)
    assert game.seats[0].status.value == "out"
    assert game.deferred_wrong_calls == []
    assert Game.replay(game.history) == game
