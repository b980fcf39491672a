"""Setting up: the deck, the players and the deal (R1, R2, R3)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from telesnap.game import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Game,
    NotYourTurnError,
    SetupError,
    parse_cards,
    shuffled_deck,
    standard_deck,
)

from .helpers import deal_piles, face_down, face_up


@pytest.mark.parametrize("players", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_r2_the_full_deck_is_dealt_as_evenly_as_possible(players: int) -> None:
    game = Game()
    game.deal(players, dealer=players - 1, deck=shuffled_deck(random.Random(players)))
    counts = game.card_counts()
    assert sum(counts) == 52
    assert max(counts) - min(counts) <= 1
    # The players left of the dealer (seat 0 onwards here) get the extra cards.
    assert list(counts) == sorted(counts, reverse=True)
    assert Counter(card for seat in game.seats for card in seat.face_down) == Counter(
        standard_deck()
    )


def test_r2_cards_are_dealt_one_at_a_time_starting_left_of_the_dealer() -> None:
    # Dealer is seat 1 of 3, so seat 2 gets the first card, then seat 0, then seat 1.
    game = Game()
    game.deal(3, dealer=1, deck=parse_cards("A♠ 2♠ 3♠ 4♠ 5♠ 6♠ 7♠"))
    # Each card is put on top of the receiver's pile: the last one dealt is flipped first.
    assert face_down(game, 2) == "7♠ 4♠ A♠"
    assert face_down(game, 0) == "5♠ 2♠"
    assert face_down(game, 1) == "6♠ 3♠"
    assert all(face_up(game, seat) == "" for seat in range(3))


def test_r2_the_full_deal_gives_each_player_every_nth_card() -> None:
    deck = standard_deck()
    game = Game()
    game.deal(4, dealer=2, deck=deck)
    # Seat 3 is left of dealer 2: it gets cards 0, 4, 8, ..., the last of them on top.
    assert list(game.seats[3].face_down) == list(reversed(deck[0::4]))
    assert list(game.seats[0].face_down) == list(reversed(deck[1::4]))
    assert list(game.seats[2].face_down) == list(reversed(deck[3::4]))


@pytest.mark.parametrize(
    ("players", "dealer", "first"), [(2, 0, 1), (2, 1, 0), (5, 4, 0), (5, 2, 3)]
)
def test_r3_the_player_left_of_the_dealer_flips_first(
    players: int, dealer: int, first: int
) -> None:
    game = Game()
    game.deal(players, dealer=dealer, deck=standard_deck())
    assert game.turn == first
    for seat in set(range(players)) - {first}:
        with pytest.raises(NotYourTurnError):
            game.flip(seat)
    assert game.flip(first).seat == first


def test_r3_play_goes_clockwise_to_the_next_seat() -> None:
    game = deal_piles(["2♠ 3♠", "4♠ 5♠", "6♠ 7♠"], dealer=2)
    order = []
    for _ in range(5):
        order.append(game.turn)
        game.flip(game.turn)
    assert order == [0, 1, 2, 0, 1]


@pytest.mark.parametrize("players", [0, 1, MAX_PLAYERS + 1])
def test_r1_two_to_twelve_players(players: int) -> None:
    game = Game()
    with pytest.raises(SetupError, match="Snap needs 2 to 12 players"):
        game.deal(players, dealer=0, deck=standard_deck())


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        ("A♠ A♠ 2♠", "each at most once"),
        ("A♠", "at least one card per player"),
    ],
)
def test_r1_a_deck_must_be_distinct_standard_cards_one_per_player_at_least(
    deck: str, message: str
) -> None:
    with pytest.raises(SetupError, match=message):
        Game().deal(2, dealer=0, deck=parse_cards(deck))


def test_r1_the_dealer_must_be_a_player_and_cards_are_dealt_once() -> None:
    game = Game()
    with pytest.raises(SetupError, match="dealer must be one of the 3 players"):
        game.deal(3, dealer=3, deck=standard_deck())
    game.deal(3, dealer=0, deck=standard_deck())
    with pytest.raises(SetupError, match="already been dealt"):
        game.deal(3, dealer=0, deck=standard_deck())


def test_r1_nothing_can_happen_before_the_deal() -> None:
    game = Game()
    for action in (lambda: game.flip(0), game.end_by_limit, game.abandon, lambda: game.remove(0)):
        with pytest.raises(SetupError, match="not been dealt yet"):
            action()
