"""Invariants checked on many random games (Hypothesis): R8, R18, R22, R25 and card conservation."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from telesnap.game import (
    CallKind,
    CallVerdict,
    Card,
    EndReason,
    Game,
    GameOverError,
    LeaveReason,
    NotInGameError,
    PlayerOutError,
    SeatStatus,
    SnapError,
    operation_from_json,
    operation_to_json,
    standard_deck,
)

from .helpers import MS, state_without_history

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

steps = st.lists(
    st.tuples(st.integers(0, 15), st.integers(0, 11), st.integers(0, 300)),
    min_size=10,
    max_size=150,
)


@st.composite
def dealt_games(draw: st.DrawFn) -> tuple[Game, list[Card]]:
    players = draw(st.integers(2, 6))
    deck = draw(st.permutations(standard_deck()))[: draw(st.integers(players, 52))]
    game = Game()
    game.deal(players, dealer=draw(st.integers(0, players - 1)), deck=deck)
    return game, deck


def action_for(
    game: Game, step: tuple[int, int, int], clock_ns: int, sequence: int
) -> Callable[[], object]:
    """One action, legal or not, chosen by a step of three numbers."""
    kind, seat_number, number = step
    seat = seat_number % len(game.seats)

    def call(call_kind: CallKind, seen: int) -> Callable[[], object]:
        return lambda: game.call(
            seat, call_kind, stamp_ns=clock_ns, sequence=sequence, seen_version=seen
        )

    if kind <= 3:
        return lambda: game.flip(game.turn)
    if kind == 4:  # a Flip button of the current board or one of the last few
        return lambda: game.flip(game.turn, seen_version=max(0, game.board_version - number % 3))
    if kind == 5:
        return lambda: game.flip(seat)
    if kind <= 8:  # what a watchful player does: call what shows, or wait for the race
        if game.is_snap_showing():
            return call(CallKind.SNAP, game.board_version)
        if game.is_snap_pot_showing():
            return call(CallKind.SNAP_POT, game.board_version)
        if game.is_race_open:
            return lambda: game.resolve_race(tie_window_ms=number % 150)
        return lambda: game.flip(game.turn)
    if kind == 9:
        return call(CallKind.SNAP_POT, game.board_version)
    if kind == 10:
        return call(CallKind.SNAP, max(0, game.board_version - 1 - number % 3))
    if kind <= 12:
        return lambda: game.resolve_race(tie_window_ms=number % 150)
    if kind == 13 and number < 40:
        return lambda: game.remove(seat, LeaveReason.LEFT)
    if kind == 14 and number < 6:
        return game.end_by_limit
    if kind == 14 and number < 9:
        return game.abandon
    if kind == 15:
        return call(CallKind.SNAP, game.board_version + 1)  # a button of no board
    return lambda: game.flip(seat_number + 12)  # not a seat of this game


def play_steps(game: Game, deck: list[Card], chosen_steps: list[tuple[int, int, int]]) -> None:
    """Run the steps, checking after each that cards are conserved and refusals change nothing."""
    clock_ns = 0
    for sequence, step in enumerate(chosen_steps):
        clock_ns += step[2] * MS
        before = copy.deepcopy(state_without_history(game))
        history_length = len(game.history)
        try:
            action_for(game, step, clock_ns, sequence)()
        except SnapError:
            assert state_without_history(game) == before
            assert len(game.history) == history_length
        cards = [card for seat in game.seats for card in (*seat.face_down, *seat.face_up)]
        assert Counter(cards + game.pot) == Counter(deck)


@FAST
@given(dealt_games(), steps)
def test_r25_cards_are_conserved_and_refused_actions_change_nothing(
    dealt: tuple[Game, list[Card]], chosen_steps: list[tuple[int, int, int]]
) -> None:
    game, deck = dealt
    play_steps(game, deck, chosen_steps)


@FAST
@given(dealt_games(), steps)
def test_r25_replay_and_json_replay_rebuild_the_same_game(
    dealt: tuple[Game, list[Card]], chosen_steps: list[tuple[int, int, int]]
) -> None:
    game, deck = dealt
    play_steps(game, deck, chosen_steps)
    assert Game.replay(game.history) == game
    rows = json.loads(json.dumps([operation_to_json(op) for op in game.history]))
    assert Game.replay([operation_from_json(row) for row in rows]) == game


@FAST
@given(dealt_games(), steps)
def test_r18_a_player_who_is_out_or_has_left_can_do_nothing(
    dealt: tuple[Game, list[Card]], chosen_steps: list[tuple[int, int, int]]
) -> None:
    game, deck = dealt
    play_steps(game, deck, chosen_steps)
    expected = {SeatStatus.OUT: PlayerOutError, SeatStatus.LEFT: NotInGameError}
    for seat, player in enumerate(game.seats):
        if player.is_active:
            continue
        error = GameOverError if game.is_over else expected[player.status]
        assert not game.can_call(seat, game.board_version, CallKind.SNAP)
        assert not game.can_remove(seat)
        with pytest.raises(error):
            game.flip(seat)
        with pytest.raises(error):
            game.call(seat, CallKind.SNAP, stamp_ns=0, sequence=0, seen_version=0)
        with pytest.raises(error):
            game.remove(seat)


def board_with_a_match(seed: int, players: int) -> Game | None:
    """A random game played until a match (or a pot match) shows; sometimes with a pot."""
    rng = random.Random(seed)
    game = Game()
    deck = standard_deck()
    rng.shuffle(deck)
    game.deal(players, dealer=rng.randrange(players), deck=deck)
    for clock in range(200):
        if game.is_over:
            return None
        if game.is_snap_showing() or game.is_snap_pot_showing():
            if rng.random() < 0.5 and game.flips > 4:
                return game
            callers = rng.sample(game.active_seats(), 2)
            for offset, seat in enumerate(callers):
                kind = CallKind.SNAP if game.is_snap_showing() else CallKind.SNAP_POT
                game.call(
                    seat, kind, stamp_ns=clock, sequence=offset, seen_version=game.board_version
                )
            game.resolve_race(tie_window_ms=rng.choice([0, 1000]))
        else:
            game.flip(game.turn)
    return None


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(2, 6),
    st.lists(
        st.tuples(st.integers(0, 11), st.booleans(), st.integers(0, 50), st.integers(0, 2)),
        min_size=1,
        max_size=6,
        unique_by=lambda call: call[0],
    ),
    st.integers(0, 30),
    st.randoms(use_true_random=False),
)
def test_r8_resolve_race_is_independent_of_the_order_calls_arrive(
    seed: int,
    players: int,
    calls: list[tuple[int, bool, int, int]],
    tie_window_ms: int,
    shuffler: random.Random,
) -> None:
    start = board_with_a_match(seed, players)
    assume(start is not None)
    assert start is not None
    calls = [(seat % players, *rest) for seat, *rest in calls]
    calls = list({call[0]: call for call in calls}.values())

    def opens_a_race(call: tuple[int, bool, int, int]) -> bool:
        """Whether the call, made first on the board it saw, would be correct."""
        seat, pot_call, stamp_ms, version_lag = call
        kind = CallKind.SNAP_POT if pot_call else CallKind.SNAP
        game = Game.replay(start.history)
        seen = max(0, game.board_version - version_lag)
        if not game.can_call(seat, seen, kind):
            return False
        made = game.call(seat, kind, stamp_ns=stamp_ms * MS, sequence=seat, seen_version=seen)
        return made.verdict is CallVerdict.PENDING

    assume(any(opens_a_race(call) for call in calls))
    results = set()
    for _ in range(4):
        order = shuffler.sample(calls, len(calls))
        opener = next(call for call in order if opens_a_race(call))
        order.remove(opener)  # the race opens with a correct call, then anything may follow
        game = Game.replay(start.history)
        for seat, pot_call, stamp_ms, version_lag in [opener, *order]:
            kind = CallKind.SNAP_POT if pot_call else CallKind.SNAP
            seen = max(0, game.board_version - version_lag)
            if game.can_call(seat, seen, kind):
                game.call(seat, kind, stamp_ns=stamp_ms * MS, sequence=seat, seen_version=seen)
        resolved = game.resolve_race(tie_window_ms)
        state = state_without_history(game)
        results.add(repr((resolved, state, game.history[-1])))
    assert len(results) == 1


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 8), st.integers(1, 300))
def test_r22_random_legal_play_always_ends_by_the_flip_limit(
    seed: int, players: int, flip_limit: int
) -> None:
    rng = random.Random(seed)
    game = Game()
    deck = standard_deck()
    rng.shuffle(deck)
    game.deal(players, dealer=rng.randrange(players), deck=deck)
    sequence = 0
    for _ in range(4 * flip_limit + 10):
        if game.is_over:
            break
        if game.flips >= flip_limit:
            game.end_by_limit()
            break
        for seat in game.active_seats():
            kind = rng.choice(list(CallKind))
            if rng.random() < 0.2 and game.can_call(seat, game.board_version, kind):
                sequence += 1
                game.call(
                    seat,
                    kind,
                    stamp_ns=sequence,
                    sequence=sequence,
                    seen_version=game.board_version,
                )
        if game.is_race_open:
            game.resolve_race(tie_window_ms=rng.choice([0, 50]))
        elif not game.is_over:
            game.flip(game.turn)
    assert game.outcome is not None
    assert game.flips <= flip_limit
    if game.outcome.reason is EndReason.LIMIT:
        assert game.flips == flip_limit
