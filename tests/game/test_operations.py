"""Operations, history and replay (R25): JSON round trips and corrupt histories."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from telesnap.game import (
    CallKind,
    CallResult,
    CallVerdict,
    CardFlipped,
    EndReason,
    Game,
    GameEnded,
    GameStarted,
    HistoryError,
    LeaveReason,
    MatchMode,
    Operation,
    PenaltyPaid,
    PlayerLeft,
    PlayerOut,
    RaceResolved,
    SnapCalled,
    SnapError,
    TurnSkipped,
    operation_from_json,
    operation_to_json,
    parse_card,
    parse_cards,
)
from telesnap.game.operations import OPERATION_TYPES

from .helpers import call, deal_piles, flip_turns

ONE_OF_EACH: list[Operation] = [
    GameStarted(3, 2, tuple(parse_cards("A♠ 10♥ Q♦")), MatchMode.SUIT, False),
    CardFlipped(1, parse_card("10♥"), turned_over=True),
    TurnSkipped(2),
    SnapCalled(2, CallKind.SNAP_POT, 123_456_789_012, 77, 4, CallVerdict.TOO_SLOW, 250),
    SnapCalled(0, CallKind.SNAP, 0, 1, 0, CallVerdict.PENDING),
    RaceResolved(
        CallKind.SNAP,
        (0, 2),
        (0, 1),
        False,
        6,
        (CallResult(0, CallVerdict.TIED), CallResult(2, CallVerdict.TOO_SLOW, 12)),
    ),
    PenaltyPaid(2, 1, parse_card("K♣"), turned_over=False),
    PlayerOut(1),
    PlayerLeft(0, LeaveReason.REMOVED, ((1, parse_card("2♦")), (2, parse_card("3♣")))),
    GameEnded((0, 2), EndReason.LIMIT, (20, 0, 20)),
]


def test_r25_the_examples_cover_every_operation_type() -> None:
    assert {op.kind for op in ONE_OF_EACH} == set(OPERATION_TYPES)


@pytest.mark.parametrize("op", ONE_OF_EACH, ids=lambda op: op.kind)
def test_r25_every_operation_survives_a_json_round_trip(op: Operation) -> None:
    text = json.dumps(operation_to_json(op), ensure_ascii=False)
    assert operation_from_json(json.loads(text)) == op
    assert json.loads(text)["kind"] == op.kind


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "is a JSON object, not list"),
        ("card_flipped", "is a JSON object, not str"),
        ({}, "Unknown operation kind None"),
        ({"kind": ["card_flipped"]}, "Unknown operation kind"),
        ({"kind": "card_flipped", "seat": 1}, "Malformed card_flipped operation"),
        ({"kind": "card_flipped", "seat": 1, "card": "Z", "turned_over": False}, "not a card"),
        ({"kind": "card_flipped", "seat": 1, "card": 7, "turned_over": False}, "expected a card"),
        ({"kind": "card_flipped", "seat": "1", "card": "A♠", "turned_over": 0}, "whole number"),
        ({"kind": "card_flipped", "seat": 1, "card": "A♠", "turned_over": 0}, "true or false"),
        ({"kind": "player_out", "seat": True}, "whole number"),
        ({"kind": "game_ended", "winners": [0], "reason": "won", "card_counts": [1]}, "won"),
        ({"kind": "game_ended", "winners": ["0"], "reason": "limit", "card_counts": []}, "whole"),
        (
            {
                "kind": "race_resolved",
                "call": "snap",
                "winners": [0],
                "piles": [0],
                "pot_taken": False,
                "cards": 2,
                "results": [[0, "won"]],
            },
            "Malformed race_resolved",
        ),
        ({"kind": "player_left", "seat": 0, "leave_reason": "left", "given": 3}, "Malformed"),
    ],
)
def test_r25_malformed_json_is_a_snap_error(data: Any, message: str) -> None:
    with pytest.raises(SnapError, match=message):
        operation_from_json(data)


def played_game() -> Game:
    game = deal_piles(["K♣ 7♠ 5♦ 7♣", "2♦ 7♥ 6♦ 9♠", "3♣ 9♦ 8♦ 9♣"], dealer=2)
    flip_turns(game, 5)
    call(game, 0, at_ms=0)
    call(game, 2, at_ms=60)
    call(game, 1, CallKind.SNAP_POT, at_ms=70)  # wrong: there is no pot yet
    game.resolve_race(tie_window_ms=100)
    flip_turns(game, 2)
    call(game, 1)
    game.remove(2)
    return game


def test_r25_replaying_the_history_or_its_json_rebuilds_the_same_game() -> None:
    game = played_game()
    assert Game.replay(game.history) == game
    rows = json.loads(json.dumps([operation_to_json(op) for op in game.history]))
    assert Game.replay(operation_from_json(row) for row in rows) == game


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h[1:], "must start with the deal"),
        (lambda h: [h[0], h[0]], "dealt twice"),
        (lambda h: [h[0], CardFlipped(0, parse_card("A♥"), False)], "flips A♥"),
        (lambda h: [h[0], CardFlipped(0, parse_card("K♣"), True)], "turned over wrongly"),
        (lambda h: [h[0], CardFlipped(9, parse_card("K♣"), False)], "card_flipped"),
        (lambda h: [h[0], PlayerOut(0)], "out with cards"),
        (lambda h: [*h, GameEnded((), EndReason.ABANDONED, ()), PlayerOut(0)], "after the end"),
        (
            lambda h: [h[0], RaceResolved(CallKind.SNAP, (0,), (0,), False, 0, ())],
            "no call waiting",
        ),
        (lambda h: [GameStarted(2, 5, tuple(parse_cards("A♠ 2♠")))], "dealer"),
        (lambda h: [GameStarted(2, 0, tuple(parse_cards("A♠ A♠")))], "card twice"),
    ],
)
def test_r25_a_history_that_does_not_fit_is_refused(edit: Any, message: str) -> None:
    history = played_game().history
    with pytest.raises(HistoryError, match=message):
        Game.replay(edit(history))


@pytest.mark.parametrize("change", [+1, -1])
def test_r25_a_race_whose_card_count_was_edited_is_refused(change: int) -> None:
    """The figures credit a race's winner with its card count: it must be the cards moved."""
    history = played_game().history
    index = next(i for i, op in enumerate(history) if isinstance(op, RaceResolved))
    race = history[index]
    assert isinstance(race, RaceResolved)
    edited = dataclasses.replace(race, cards=race.cards + change)
    message = f"the race moved {race.cards} cards, not {edited.cards}"
    with pytest.raises(HistoryError, match=message):
        Game.replay([*history[:index], edited, *history[index + 1 :]])


def test_r25_every_action_records_what_happened() -> None:
    game = deal_piles(["K♣ 7♠", "2♦ 7♥"], dealer=1)
    game.flip(0)
    call(game, 1, at_ms=3, sequence=8)
    assert game.history[1:] == [
        CardFlipped(0, parse_card("K♣"), turned_over=False),
        SnapCalled(1, CallKind.SNAP, 3_000_000, 8, 1, CallVerdict.WRONG),
        PenaltyPaid(1, 0, parse_card("2♦"), turned_over=False),
    ]
