"""How each operation changes a :class:`~telesnap.game.state.Board`.

The engine decides *what* happens; these carry it out. Replaying a history runs the same
functions, so a replayed game is the same game; an operation that does not fit the board (a
corrupt or edited history) raises :class:`~telesnap.game.errors.HistoryError`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from .errors import HistoryError
from .operations import (
    CallVerdict,
    CardFlipped,
    GameEnded,
    GameStarted,
    Operation,
    PenaltyPaid,
    PlayerLeft,
    PlayerOut,
    RaceResolved,
    SnapCalled,
    TurnSkipped,
)
from .race import Call, CallKind
from .state import Board, Outcome, RaceMemory, Seat, SeatStatus


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise HistoryError(f"The history does not fit the game: {message}.")


def _pass_turn(board: Board, seat: int) -> None:
    """Give the turn to the next active player after ``seat``."""
    following = board.next_active_after(seat)
    if following is not None:
        board.turn = following


def _settle_turn(board: Board) -> None:
    """Pass the turn on if the player whose turn it is can no longer play."""
    if not board.seats[board.turn].is_active:
        _pass_turn(board, board.turn)


def apply_game_started(board: Board, op: GameStarted) -> None:
    """Deal the deck one card at a time, starting left of the dealer."""
    _check(not board.seats, "the cards were dealt twice")
    _check(0 <= op.dealer < op.player_count, "the dealer is not one of the players")
    _check(len(set(op.deck)) == len(op.deck), "the deck holds a card twice")
    board.seats = [Seat() for _ in range(op.player_count)]
    board.called_from = {kind: [None] * op.player_count for kind in CallKind}
    board.turn_ended_at = [0] * op.player_count
    board.dealer = op.dealer
    board.match_mode = op.match_mode
    board.wrong_call_penalty = op.wrong_call_penalty
    for position, card in enumerate(op.deck):
        board.seats[(op.dealer + 1 + position) % op.player_count].face_down.appendleft(card)
    _pass_turn(board, op.dealer)


def _turn_over_if_empty(seat: Seat) -> bool:
    """Turn the face-up pile over (no shuffle) to become the face-down pile, if that is empty."""
    if seat.face_down:
        return False
    seat.face_down = deque(seat.face_up)
    seat.face_up.clear()
    return True


def apply_card_flipped(board: Board, op: CardFlipped) -> None:
    """Move the top face-down card onto the face-up pile; the turn passes on."""
    seat = board.seats[op.seat]
    _check(op.turned_over == (not seat.face_down), f"seat {op.seat} turned over wrongly")
    _turn_over_if_empty(seat)
    _check(bool(seat.face_down) and seat.face_down[0] == op.card, f"seat {op.seat} flips {op.card}")
    seat.face_up.append(seat.face_down.popleft())
    board.last_flipper = op.seat
    board.flips += 1
    board.board_version += 1
    board.turn_ended_at[op.seat] = board.board_version
    _pass_turn(board, op.seat)


def apply_turn_skipped(board: Board, op: TurnSkipped) -> None:
    """Pass the turn on without a flip."""
    _check(op.seat == board.turn and board.seats[op.seat].is_active, f"seat {op.seat} skipped")
    # The board does not change, so only a board shown after this one follows the skip.
    board.turn_ended_at[op.seat] = board.board_version + 1
    _pass_turn(board, op.seat)


def apply_snap_called(board: Board, op: SnapCalled) -> None:
    """Queue a correct call for the race, or a wrong one for its penalty after the race."""
    board.called_from[op.call][op.seat] = op.seen_version
    if op.verdict is CallVerdict.PENDING:
        board.pending_calls.append(Call(op.seat, op.call, op.stamp_ns, op.sequence))
    elif op.verdict is CallVerdict.WRONG and board.is_race_open and board.wrong_call_penalty:
        board.deferred_wrong_calls.append(op.seat)


def apply_race_resolved(board: Board, op: RaceResolved) -> None:
    """Give the piles (and the pot) to the winner, or send them into the pot on a tie."""
    _check(board.is_race_open, "a race was resolved with no call waiting")
    first_stamp = min(call.stamp_ns for call in board.pending_calls)
    board.last_race = RaceMemory(board.board_version, first_stamp)
    board.pending_calls.clear()
    # The wrong calls made during the race are paid by the PenaltyPaid operations that
    # follow; a caller left with no cards pays nothing, so the list is cleared here.
    board.deferred_wrong_calls.clear()
    piles = [board.seats[index].face_up for index in op.piles]
    takes_pot = len(op.winners) == 1 and op.pot_taken
    # The count is what the stats credit the winner with, so it must be what moves.
    moved = sum(len(pile) for pile in piles) + (len(board.pot) if takes_pot else 0)
    _check(op.cards == moved, f"the race moved {moved} cards, not {op.cards}")
    if len(op.winners) == 1:
        receiver = board.seats[op.winners[0]].face_down
        if takes_pot:
            receiver.extend(board.pot)
            board.pot.clear()
        for pile in piles:
            receiver.extend(pile)
            pile.clear()
    else:
        for pile in piles:
            board.pot.extend(pile)
            pile.clear()
    board.board_version += 1


def apply_penalty_paid(board: Board, op: PenaltyPaid) -> None:
    """Move the wrong caller's top face-down card to the bottom of the receiver's."""
    if op.seat in board.deferred_wrong_calls:
        board.deferred_wrong_calls.remove(op.seat)
    payer = board.seats[op.seat]
    _check(op.turned_over == (not payer.face_down), f"seat {op.seat} turned over wrongly")
    if _turn_over_if_empty(payer):
        board.board_version += 1
    _check(payer.face_down[0] == op.card, f"seat {op.seat} pays {op.card}")
    board.seats[op.receiver].face_down.append(payer.face_down.popleft())


def apply_player_out(board: Board, op: PlayerOut) -> None:
    """Mark a player with no cards as out, and pass the turn on if it was theirs."""
    seat = board.seats[op.seat]
    _check(seat.card_count == 0 and seat.is_active, f"seat {op.seat} is out with cards")
    seat.status = SeatStatus.OUT
    _settle_turn(board)


def apply_player_left(board: Board, op: PlayerLeft) -> None:
    """Deal the leaver's cards to the others and take the seat out of the game."""
    seat = board.seats[op.seat]
    had_top = bool(seat.face_up) and seat.is_active
    cards = [*seat.face_down, *seat.face_up]
    _check([card for _, card in op.given] == cards, f"seat {op.seat} gave other cards")
    seat.face_down.clear()
    seat.face_up.clear()
    seat.status = SeatStatus.LEFT
    for receiver, card in op.given:
        board.seats[receiver].face_down.append(card)
    if had_top:
        board.board_version += 1
    _settle_turn(board)


def apply_game_ended(board: Board, op: GameEnded) -> None:
    """Record the outcome; calls still waiting are dropped."""
    board.pending_calls.clear()
    board.deferred_wrong_calls.clear()
    board.outcome = Outcome(op.winners, op.reason)


_APPLIERS: dict[type[Any], Callable[[Board, Any], None]] = {
    GameStarted: apply_game_started,
    CardFlipped: apply_card_flipped,
    TurnSkipped: apply_turn_skipped,
    SnapCalled: apply_snap_called,
    RaceResolved: apply_race_resolved,
    PenaltyPaid: apply_penalty_paid,
    PlayerOut: apply_player_out,
    PlayerLeft: apply_player_left,
    GameEnded: apply_game_ended,
}


def apply_operation(board: Board, op: Operation) -> None:
    """Carry an operation out on the board and append it to the history."""
    if not board.seats and not isinstance(op, GameStarted):
        raise HistoryError("The history does not fit the game: it must start with the deal.")
    if board.outcome is not None:
        raise HistoryError("The history does not fit the game: it goes on after the end.")
    try:
        _APPLIERS[type(op)](board, op)
    except (IndexError, KeyError) as error:
        raise HistoryError(f"The history does not fit the game: {op.kind} {error}.") from error
    board.history.append(op)
