"""Helpers that set up worked examples: pinned piles, flips and calls."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from telesnap.game import CallKind, Game, MatchMode, SnapCalled, format_cards, parse_cards

MS = 1_000_000  # nanoseconds in a millisecond


def deck_for(piles: Sequence[str], dealer: int) -> list:
    """The deck that, dealt by ``dealer``, gives seat i the face-down pile ``piles[i]``."""
    count = len(piles)
    # A card dealt later lands on top, so each seat receives its pile bottom card first.
    waiting = [list(reversed(parse_cards(pile))) for pile in piles]
    deck = []
    seat = (dealer + 1) % count
    while any(waiting):
        if not waiting[seat]:
            raise ValueError("these piles are not as even as a deal makes them")
        deck.append(waiting[seat].pop(0))
        seat = (seat + 1) % count
    return deck


def deal_piles(
    piles: Sequence[str],
    dealer: int,
    match_mode: MatchMode = MatchMode.RANK,
    wrong_call_penalty: bool = True,
) -> Game:
    """A game whose seat i starts with the face-down pile ``piles[i]`` (top card first)."""
    game = Game()
    game.deal(
        len(piles),
        dealer=dealer,
        deck=deck_for(piles, dealer),
        match_mode=match_mode,
        wrong_call_penalty=wrong_call_penalty,
    )
    assert [format_cards(list(seat.face_down)) for seat in game.seats] == [
        format_cards(parse_cards(pile)) for pile in piles
    ]
    return game


def flip_turns(game: Game, count: int) -> None:
    """Let whoever's turn it is flip, ``count`` times."""
    for _ in range(count):
        game.flip(game.turn)


def call(
    game: Game,
    seat: int,
    kind: CallKind = CallKind.SNAP,
    *,
    at_ms: int = 0,
    sequence: int | None = None,
    seen_version: int | None = None,
) -> SnapCalled:
    """A call stamped ``at_ms`` on the current board (or on ``seen_version``)."""
    return game.call(
        seat,
        kind,
        stamp_ns=at_ms * MS,
        sequence=len(game.history) if sequence is None else sequence,
        seen_version=game.board_version if seen_version is None else seen_version,
    )


def face_down(game: Game, seat: int) -> str:
    return format_cards(list(game.seats[seat].face_down))


def face_up(game: Game, seat: int) -> str:
    """The face-up pile, bottom card first (its top card is last)."""
    return format_cards(game.seats[seat].face_up)


def pot(game: Game) -> str:
    return format_cards(game.pot)


def total_cards(game: Game) -> int:
    return sum(seat.card_count for seat in game.seats) + len(game.pot)


def state_without_history(game: Game) -> dict[str, Any]:
    """Every field of the board except the history (whose order follows arrival)."""
    return {
        field.name: getattr(game, field.name)
        for field in dataclasses.fields(game)
        if field.name != "history"
    }
