"""Absent players: a skipped turn (R27)."""

from __future__ import annotations

import pytest

from telesnap.game import Game, NotYourTurnError, TurnSkipped

from .helpers import deal_piles


def test_r27_a_skipped_turn_passes_to_the_next_player_and_changes_no_card() -> None:
    game = deal_piles(["2♠ 3♠", "4♠ 5♠", "6♠ 7♠"], dealer=2)
    game.flip(0)
    counts, version = game.card_counts(), game.board_version
    assert game.skip(1) == TurnSkipped(1)
    assert game.turn == 2
    assert game.card_counts() == counts
    assert game.board_version == version
    game.flip(2)
    assert game.turn == 0
    assert Game.replay(game.history) == game


def test_r27_only_the_player_whose_turn_it_is_can_be_skipped() -> None:
    game = deal_piles(["2♠ 3♠", "4♠ 5♠", "6♠ 7♠"], dealer=2)
    with pytest.raises(NotYourTurnError):
        game.skip(1)


def test_r27_after_a_skip_the_turn_order_goes_on_clockwise() -> None:
    game = deal_piles(["2♠ 3♠", "4♠ 5♠"], dealer=1)
    game.skip(0)
    game.flip(1)
    assert game.turn == 0
