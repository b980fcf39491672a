"""Cards, the 52-card deck and the ways two face-up cards can match.

Cards print in the notation players see, and parse back from it:

>>> card = parse_card("10♥")
>>> card
Card.parse('10♥')
>>> str(card), card.rank, card.suit.is_red
('10♥', 10, True)
>>> [str(c) for c in parse_cards("A♠ Q♦ 7♣")]
['A♠', 'Q♦', '7♣']
>>> len(standard_deck()), len(set(standard_deck()))
(52, 52)
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .errors import CardParseError


class Suit(enum.Enum):
    """The four suits, with the symbol players see as their value."""

    SPADES = "♠"
    HEARTS = "♥"
    DIAMONDS = "♦"
    CLUBS = "♣"

    @property
    def is_red(self) -> bool:
        """Whether the suit is red (hearts and diamonds).

        >>> Suit.DIAMONDS.is_red, Suit.CLUBS.is_red
        (True, False)
        """
        return self in (Suit.HEARTS, Suit.DIAMONDS)


RANK_NAMES: Final = {1: "A", 11: "J", 12: "Q", 13: "K"}
_RANK_BY_NAME: Final = {**{name: rank for rank, name in RANK_NAMES.items()}, "1": 1} | {
    str(rank): rank for rank in range(2, 11)
}
# Letters accepted for suits when a keyboard has no symbols: S, H, D, C.
_SUIT_BY_TEXT: Final = {suit.value: suit for suit in Suit} | {suit.name[0]: suit for suit in Suit}


@dataclass(frozen=True, slots=True)
class Card:
    """A playing card: rank 1 (ace) to 13 (king) and a suit.

    >>> Card(12, Suit.DIAMONDS)
    Card.parse('Q♦')
    """

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise CardParseError(f"A card's rank is 1 (ace) to 13 (king), not {self.rank}.")

    def __str__(self) -> str:
        return f"{RANK_NAMES.get(self.rank, str(self.rank))}{self.suit.value}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> Card:
        """Parse one card such as ``A♠``, ``10♥`` or ``qd``.

        >>> Card.parse("qd")
        Card.parse('Q♦')
        """
        return parse_card(text)


_DECK: Final = tuple(Card(rank, suit) for suit in Suit for rank in range(1, 14))
_CARD_BY_TEXT: Final = {str(card): card for card in _DECK}


def parse_card(text: str) -> Card:
    """Parse one card in the players' notation (suit letters S/H/D/C accepted too).

    >>> parse_card(" k♣ ")
    Card.parse('K♣')
    >>> parse_card("11♠")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    telesnap.game.errors.CardParseError: '11♠' is not a card: write a rank (A, 2-10, J, Q, K) ...
    """
    cleaned = text.strip().upper()
    known = _CARD_BY_TEXT.get(cleaned)
    if known is not None:
        return known
    rank = _RANK_BY_NAME.get(cleaned[:-1])
    suit = _SUIT_BY_TEXT.get(cleaned[-1:])
    if rank is None or suit is None:
        raise CardParseError(
            f"{text.strip()!r} is not a card: write a rank (A, 2-10, J, Q, K) "
            "then a suit (♠ ♥ ♦ ♣)."
        )
    return _CARD_BY_TEXT[f"{RANK_NAMES.get(rank, str(rank))}{suit.value}"]


def parse_cards(text: str) -> list[Card]:
    """Parse cards separated by white space.

    >>> parse_cards("")
    []
    """
    return [parse_card(word) for word in text.split()]


def format_cards(cards: Sequence[Card]) -> str:
    """Print cards in the players' notation, separated by spaces.

    >>> format_cards(parse_cards("a♠ 10h"))
    'A♠ 10♥'
    """
    return " ".join(str(card) for card in cards)


def standard_deck() -> list[Card]:
    """The 52 cards in a fixed order (suit by suit, ace to king)."""
    return list(_DECK)


def shuffled_deck(rng: random.Random) -> list[Card]:
    """The 52 cards shuffled with the random generator passed in.

    >>> shuffled_deck(random.Random(7)) == shuffled_deck(random.Random(7))
    True
    """
    deck = standard_deck()
    rng.shuffle(deck)
    return deck


class MatchMode(enum.Enum):
    """When two face-up cards count as a match (a chat setting)."""

    RANK = "rank"
    RANK_AND_COLOUR = "rank_and_colour"
    SUIT = "suit"

    def key(self, card: Card) -> object:
        """The property two cards must share to match in this mode.

        >>> MatchMode.RANK_AND_COLOUR.key(parse_card("7♥")) == MatchMode.RANK_AND_COLOUR.key(
        ...     parse_card("7♦"))
        True
        """
        if self is MatchMode.RANK:
            return card.rank
        if self is MatchMode.SUIT:
            return card.suit
        return (card.rank, card.suit.is_red)
