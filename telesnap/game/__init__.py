"""The pure Snap rules engine: cards, state, actions, operations and the race.

It does no I/O, reads no clock and has no randomness of its own: a caller
passes the shuffled deck and the receipt stamps in. Everything a caller needs
is importable from here.
"""

from .cards import (
    Card,
    MatchMode,
    Suit,
    format_cards,
    parse_card,
    parse_cards,
    shuffled_deck,
    standard_deck,
)
from .engine import MAX_PLAYERS, MIN_PLAYERS, Game
from .errors import (
    CardParseError,
    DuplicateCallError,
    GameOverError,
    HistoryError,
    NoRaceError,
    NotInGameError,
    NotYourTurnError,
    PlayerOutError,
    RaceInProgressError,
    SetupError,
    SnapError,
)
from .operations import (
    CallResult,
    CallVerdict,
    CardFlipped,
    EndReason,
    GameEnded,
    GameStarted,
    LeaveReason,
    Operation,
    PenaltyPaid,
    PlayerLeft,
    PlayerOut,
    RaceResolved,
    SnapCalled,
    operation_from_json,
    operation_to_json,
)
from .race import Call, CallKind, RaceDecision, decide_race
from .state import Board, Outcome, Seat, SeatStatus

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "Board",
    "Call",
    "CallKind",
    "CallResult",
    "CallVerdict",
    "Card",
    "CardFlipped",
    "CardParseError",
    "DuplicateCallError",
    "EndReason",
    "Game",
    "GameEnded",
    "GameOverError",
    "GameStarted",
    "HistoryError",
    "LeaveReason",
    "MatchMode",
    "NoRaceError",
    "NotInGameError",
    "NotYourTurnError",
    "Operation",
    "Outcome",
    "PenaltyPaid",
    "PlayerLeft",
    "PlayerOut",
    "PlayerOutError",
    "RaceDecision",
    "RaceInProgressError",
    "RaceResolved",
    "Seat",
    "SeatStatus",
    "SetupError",
    "SnapCalled",
    "SnapError",
    "Suit",
    "decide_race",
    "format_cards",
    "operation_from_json",
    "operation_to_json",
    "parse_card",
    "parse_cards",
    "shuffled_deck",
    "standard_deck",
]
