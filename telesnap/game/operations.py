"""Operation records: what happened in a game, one frozen record per event.

A game's history is the list of its operations; replaying it rebuilds the same state. Each
serialises to a JSON-ready dict and back exactly, tagged with its format version:

>>> from .cards import parse_card
>>> op = CardFlipped(seat=2, card=parse_card("10♥"), turned_over=False)
>>> operation_to_json(op)
{'kind': 'card_flipped', 'format': 2, 'seat': 2, 'card': '10♥', 'turned_over': False}
>>> operation_from_json(operation_to_json(op)) == op
True

Stored histories must keep reading: :data:`FORMAT_UPGRADES` brings an operation up to
:data:`HISTORY_FORMAT` one version at a time before decoding, so a change to an operation's
fields takes the next version and an upgrade from the one before.

>>> operation_from_json({"kind": "player_out", "seat": 1}) == PlayerOut(1)  # format 1
True
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeAlias

from .cards import Card, MatchMode, parse_card
from .errors import SnapError
from .race import CallKind


class CallVerdict(enum.Enum):
    """What became of a call, as its caller is told."""

    PENDING = "pending"  # correct; waiting for the race to be decided
    WON = "won"
    TIED = "tied"  # tied with others: the piles went into the Snap Pot
    TOO_SLOW = "too_slow"  # correct, but someone else was faster
    TOO_LATE = "too_late"  # made on a board that has changed; no penalty
    WRONG = "wrong"  # nothing matched; a penalty follows when the game has one


class EndReason(enum.Enum):
    """Why a game ended."""

    ALL_CARDS = "all_cards"  # one player holds every card outside the pot
    LIMIT = "limit"  # the chat's flip or time limit was reached
    ABANDONED = "abandoned"  # stopped before the end; nobody wins


class LeaveReason(enum.Enum):
    """Why a player left a running game."""

    LEFT = "left"
    REMOVED = "removed"
    AFK = "afk"


@dataclass(frozen=True, slots=True)
class GameStarted:
    """The cards were dealt: the deck in dealing order, the dealer and the options."""

    kind: ClassVar[str] = "game_started"
    player_count: int
    dealer: int
    deck: tuple[Card, ...]
    match_mode: MatchMode = MatchMode.RANK
    wrong_call_penalty: bool = True


@dataclass(frozen=True, slots=True)
class CardFlipped:
    """A player flipped the top card of their face-down pile.

    ``turned_over``: their face-down pile was empty, so the face-up pile was turned over first.
    """

    kind: ClassVar[str] = "card_flipped"
    seat: int
    card: Card
    turned_over: bool


@dataclass(frozen=True, slots=True)
class TurnSkipped:
    """A player's turn passed without a flip (they were away and the chat skips them)."""

    kind: ClassVar[str] = "turn_skipped"
    seat: int


@dataclass(frozen=True, slots=True)
class SnapCalled:
    """A player called "Snap!" or "Snap Pot!"; ``verdict`` is what was known on arrival."""

    kind: ClassVar[str] = "snap_called"
    seat: int
    call: CallKind
    stamp_ns: int
    sequence: int
    seen_version: int
    verdict: CallVerdict
    behind_ms: int | None = None


@dataclass(frozen=True, slots=True)
class CallResult:
    """One caller's result in a decided race."""

    seat: int
    verdict: CallVerdict
    behind_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RaceResolved:
    """A race was decided: a winner took the piles (and the pot), or a tie sent them to the pot."""

    kind: ClassVar[str] = "race_resolved"
    call: CallKind
    winners: tuple[int, ...]
    piles: tuple[int, ...]
    pot_taken: bool
    cards: int
    results: tuple[CallResult, ...]


@dataclass(frozen=True, slots=True)
class PenaltyPaid:
    """A wrong caller gave the top card of their face-down pile to another player."""

    kind: ClassVar[str] = "penalty_paid"
    seat: int
    receiver: int
    card: Card
    turned_over: bool


@dataclass(frozen=True, slots=True)
class PlayerOut:
    """A player has no cards left: skipped from now on, and can no longer call."""

    kind: ClassVar[str] = "player_out"
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """A player left or was removed; their cards were dealt out to the others as ``given``."""

    kind: ClassVar[str] = "player_left"
    seat: int
    leave_reason: LeaveReason
    given: tuple[tuple[int, Card], ...]


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game ended: the winners (several share a win), why, and everyone's card count."""

    kind: ClassVar[str] = "game_ended"
    winners: tuple[int, ...]
    reason: EndReason
    card_counts: tuple[int, ...]


Operation: TypeAlias = (
    GameStarted
    | CardFlipped
    | TurnSkipped
    | SnapCalled
    | RaceResolved
    | PenaltyPaid
    | PlayerOut
    | PlayerLeft
    | GameEnded
)

OPERATION_TYPES: dict[str, type[Operation]] = {
    cls.kind: cls
    for cls in (
        GameStarted,
        CardFlipped,
        TurnSkipped,
        SnapCalled,
        RaceResolved,
        PenaltyPaid,
        PlayerOut,
        PlayerLeft,
        GameEnded,
    )
}

HISTORY_FORMAT = 2
"""The version of the format :func:`operation_to_json` writes."""

FORMAT_KEY = "format"
"""The key that holds an operation's format version (absent: version 1)."""

FORMAT_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: lambda data: data,  # version 2 only adds the version number itself
}
"""By version: how an operation of that version is rewritten in the next one."""

_Codec: TypeAlias = tuple[Callable[[Any], Any], Callable[[Any], Any]]


def _same(value: Any) -> Any:
    return value


def _int(value: Any) -> int:
    """Read a JSON integer; anything else (a bool, a string, a float) is malformed."""
    if type(value) is not int:
        raise TypeError(f"expected a whole number, got {value!r}")
    return value


def _optional_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise TypeError(f"expected true or false, got {value!r}")
    return value


def _card(text: Any) -> Card:
    if not isinstance(text, str):
        raise TypeError(f"expected a card such as '10♥', got {text!r}")
    return parse_card(text)


def _int_tuple() -> _Codec:
    return (list, lambda values: tuple(_int(value) for value in values))


def _enum(enum_type: type[enum.Enum]) -> _Codec:
    return (lambda value: value.value, enum_type)


_CARD: _Codec = (str, _card)
_CARDS: _Codec = (
    lambda cards: [str(card) for card in cards],
    lambda texts: tuple(_card(text) for text in texts),
)
_RESULTS: _Codec = (
    lambda results: [[r.seat, r.verdict.value, r.behind_ms] for r in results],
    lambda rows: tuple(
        CallResult(_int(seat), CallVerdict(verdict), _optional_int(behind))
        for seat, verdict, behind in rows
    ),
)
_GIVEN: _Codec = (
    lambda given: [[seat, str(card)] for seat, card in given],
    lambda rows: tuple((_int(seat), _card(text)) for seat, text in rows),
)

# How each field that is not a plain int, bool or None is written to JSON and read back.
_FIELD_CODECS: dict[str, _Codec] = {
    "deck": _CARDS,
    "match_mode": _enum(MatchMode),
    "card": _CARD,
    "call": _enum(CallKind),
    "verdict": _enum(CallVerdict),
    "winners": _int_tuple(),
    "piles": _int_tuple(),
    "results": _RESULTS,
    "reason": _enum(EndReason),
    "leave_reason": _enum(LeaveReason),
    "given": _GIVEN,
    "card_counts": _int_tuple(),
}
# Plain fields are checked by their annotation (a string: the modules use postponed annotations).
_PLAIN_DECODERS: dict[str, Callable[[Any], Any]] = {
    "int": _int,
    "bool": _bool,
    "int | None": _optional_int,
}


def _field_decoders(cls: type[Operation]) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    return tuple(
        (
            field.name,
            _FIELD_CODECS[field.name][1]
            if field.name in _FIELD_CODECS
            else _PLAIN_DECODERS.get(str(field.type), _same),
        )
        for field in fields(cls)
    )


_ENCODERS: dict[type[Any], tuple[tuple[str, Callable[[Any], Any]], ...]] = {
    cls: tuple(
        (field.name, _FIELD_CODECS.get(field.name, (_same, _same))[0]) for field in fields(cls)
    )
    for cls in OPERATION_TYPES.values()
}
_DECODERS: dict[str, tuple[type[Operation], tuple[tuple[str, Callable[[Any], Any]], ...]]] = {
    kind: (cls, _field_decoders(cls)) for kind, cls in OPERATION_TYPES.items()
}


def operation_to_json(operation: Operation) -> dict[str, Any]:
    """The operation as a JSON-ready dict: its ``kind``, the format version, its fields."""
    data: dict[str, Any] = {"kind": operation.kind, FORMAT_KEY: HISTORY_FORMAT}
    for name, encode in _ENCODERS[type(operation)]:
        data[name] = encode(getattr(operation, name))
    return data


def operation_from_json(data: Mapping[str, Any]) -> Operation:
    """Rebuild an operation from :func:`operation_to_json`'s dict, in any format version.

    Anything malformed, or in a format newer than this code reads, raises
    :class:`~telesnap.game.errors.SnapError`:

    >>> operation_from_json({"kind": "dealt"})
    Traceback (most recent call last):
    ...
    telesnap.game.errors.SnapError: Unknown operation kind 'dealt'.
    >>> operation_from_json({"kind": "player_out", "seat": "2"})
    Traceback (most recent call last):
    ...
    telesnap.game.errors.SnapError: Malformed player_out operation: expected a whole number, got '2'
    >>> operation_from_json({"kind": "player_out", "format": 9, "seat": 2})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    telesnap.game.errors.SnapError: This operation is in history format 9; ... reads 1 to 2.
    """
    if not isinstance(data, Mapping):
        raise SnapError(f"An operation is a JSON object, not {type(data).__name__}.")
    data = _upgraded(data)
    kind = data.get("kind")
    known = _DECODERS.get(kind) if isinstance(kind, str) else None
    if known is None:
        raise SnapError(f"Unknown operation kind {kind!r}.")
    cls, decoders = known
    values: dict[str, Any] = {}
    try:
        for name, decode in decoders:
            if name in data:
                values[name] = decode(data[name])
        return cls(**values)
    except (TypeError, ValueError) as error:
        raise SnapError(f"Malformed {kind} operation: {error}") from error


def _upgraded(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The operation rewritten in :data:`HISTORY_FORMAT`, from whatever version it is in."""
    version = data.get(FORMAT_KEY, 1)
    if type(version) is not int or not 1 <= version <= HISTORY_FORMAT:
        raise SnapError(
            f"This operation is in history format {version!r}; "
            f"this telesnap reads 1 to {HISTORY_FORMAT}."
        )
    if version == HISTORY_FORMAT:
        return data
    upgraded = dict(data)
    while version < HISTORY_FORMAT:
        upgraded = FORMAT_UPGRADES[version](upgraded)
        version += 1
    upgraded[FORMAT_KEY] = version
    return upgraded
