"""Card notation: parsing, printing and the match modes (R6, R26)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from telesnap.game import (
    Card,
    CardParseError,
    MatchMode,
    SnapError,
    Suit,
    format_cards,
    parse_card,
    parse_cards,
    standard_deck,
)


@pytest.mark.parametrize("card", standard_deck(), ids=str)
def test_r26_every_card_prints_and_parses_back(card: Card) -> None:
    assert parse_card(str(card)) == card
    assert eval(repr(card), {"Card": Card}) == card


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A♠", Card(1, Suit.SPADES)),
        ("1♠", Card(1, Suit.SPADES)),
        ("as", Card(1, Suit.SPADES)),
        ("10h", Card(10, Suit.HEARTS)),
        (" q♦ ", Card(12, Suit.DIAMONDS)),
        ("KC", Card(13, Suit.CLUBS)),
        ("7♥", Card(7, Suit.HEARTS)),
    ],
)
def test_r26_players_notation_and_letters_are_accepted(text: str, expected: Card) -> None:
    assert parse_card(text) == expected


@pytest.mark.parametrize("text", ["", "♠", "11♠", "0♥", "Z", "A", "AX", "A ♠", "10♥♥", "T♠"])
def test_r26_text_that_is_not_a_card_is_refused_with_a_hint(text: str) -> None:
    with pytest.raises(CardParseError, match=r"is not a card: write a rank \(A, 2-10, J, Q, K\)"):
        parse_card(text)


def test_r26_card_parse_error_is_a_snap_error_and_a_value_error() -> None:
    with pytest.raises(SnapError):
        parse_card("11♠")
    with pytest.raises(ValueError, match="rank is 1"):
        Card(14, Suit.SPADES)


def test_r26_several_cards_parse_and_print_in_order() -> None:
    assert format_cards(parse_cards("a♠ 10h  Qd\tK♣")) == "A♠ 10♥ Q♦ K♣"
    assert parse_cards("") == []
    with pytest.raises(CardParseError, match="'X9' is not a card"):
        parse_cards("A♠ X9")


@given(st.lists(st.sampled_from(standard_deck())))
def test_r26_printed_cards_parse_back_to_the_same_cards(cards: list[Card]) -> None:
    printed = format_cards(cards)
    assert parse_cards(printed) == cards
    assert format_cards(parse_cards(printed)) == printed


def test_r1_the_standard_deck_is_52_distinct_cards_13_per_suit() -> None:
    deck = standard_deck()
    assert len(set(deck)) == 52
    for suit in Suit:
        assert sorted(card.rank for card in deck if card.suit is suit) == list(range(1, 14))


@pytest.mark.parametrize(
    ("mode", "first", "second", "expected"),
    [
        (MatchMode.RANK, "7♥", "7♣", True),
        (MatchMode.RANK, "7♥", "8♥", False),
        (MatchMode.RANK_AND_COLOUR, "7♥", "7♦", True),
        (MatchMode.RANK_AND_COLOUR, "7♠", "7♣", True),
        (MatchMode.RANK_AND_COLOUR, "7♥", "7♣", False),
        (MatchMode.SUIT, "2♥", "K♥", True),
        (MatchMode.SUIT, "2♥", "2♦", False),
    ],
)
def test_r6_match_modes_compare_rank_colour_or_suit(
    mode: MatchMode, first: str, second: str, expected: bool
) -> None:
    assert (mode.key(parse_card(first)) == mode.key(parse_card(second))) is expected
