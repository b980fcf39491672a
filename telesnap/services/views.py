"""What the services hand back for showing: tables, lobbies and outcomes.

Plain frozen values, so the bot can render them without touching the engine or storage.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, fields, is_dataclass
from typing import Any

from ..game import (
    CallResult,
    CallVerdict,
    Card,
    EndReason,
    Game,
    Operation,
    SeatStatus,
    operation_from_json,
    operation_to_json,
)
from .stats.standings import FinalView, final_view


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One seat at the table, as players see it."""

    seat: int
    user_id: int
    name: str
    top: Card | None
    face_down: int
    face_up: int
    status: SeatStatus
    is_turn: bool


@dataclass(frozen=True, slots=True)
class TableView:
    """The table of a running (or just ended) game after an action."""

    game_id: int
    board_version: int
    players: tuple[PlayerView, ...]
    pot_top: Card | None
    pot_size: int
    flips: int
    is_race_open: bool
    winners: tuple[int, ...] | None
    end_reason: EndReason | None
    final: FinalView | None = None
    """The final standings, once the game has ended."""
    flip_limit: int | None = None
    """The flip limit the game plays by (None: none), so its end can say which limit ended it."""
    board_style: str = "messages"
    """How the game is shown: a message per board, or one live message (see the settings)."""

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.winners is not None

    @property
    def turn_player(self) -> PlayerView | None:
        """Whose turn it is, or None when the game is over."""
        return None if self.is_over else next((p for p in self.players if p.is_turn), None)

    def name_of_seat(self, seat: int) -> str:
        """The display name of the player in ``seat``."""
        return self.players[seat].name

    @staticmethod
    def of(
        game_id: int,
        game: Game,
        user_ids: list[int],
        names: list[str],
        fastest_calls: Mapping[int, int] | None = None,
        *,
        flip_limit: int | None = None,
        board_style: str = "messages",
    ) -> TableView:
        """The view of ``game``; ``fastest_calls`` (seat -> ms) feeds an ended game's standings."""
        players = tuple(
            PlayerView(
                seat=index,
                user_id=user_ids[index],
                name=names[index],
                top=seat.top,
                face_down=len(seat.face_down),
                face_up=len(seat.face_up),
                status=seat.status,
                is_turn=index == game.turn and not game.is_over,
            )
            for index, seat in enumerate(game.seats)
        )
        outcome = game.outcome
        return TableView(
            game_id=game_id,
            board_version=game.board_version,
            players=players,
            pot_top=game.pot_top,
            pot_size=len(game.pot),
            flips=game.flips,
            is_race_open=game.is_race_open,
            winners=outcome.winners if outcome else None,
            end_reason=outcome.reason if outcome else None,
            final=final_view(game, names, fastest_calls or {}) if outcome else None,
            flip_limit=flip_limit,
            board_style=board_style,
        )


@dataclass(frozen=True, slots=True)
class LobbyView:
    """A game waiting for players."""

    game_id: int
    creator_id: int
    players: tuple[tuple[int, str], ...]
    status: str
    message_id: int | None = None
    closes_at: str | None = None
    """When the lobby expires (ISO 8601, UTC), as the change left it; None: never."""
    minutes_left: int | None = None
    """How many minutes it had left at that change (rounded up)."""

    @property
    def player_names(self) -> tuple[str, ...]:
        """The names of the players who joined, in join order."""
        return tuple(name for _, name in self.players)


@dataclass(frozen=True, slots=True)
class OpenOutcome:
    """A lobby just opened, and the language the chat is written in now (None: the default)."""

    lobby: LobbyView
    language: str | None
    alerted: tuple[tuple[int, str | None], ...] = ()
    """The people told privately that the lobby opened (``/notify``): (user id, language)."""


@dataclass(frozen=True, slots=True)
class PlayOutcome:
    """The result of an action on a running game: the table and what happened."""

    table: TableView
    operations: tuple[Operation, ...]


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A call's verdict now, and its race if correct (its deadline on the receipt wall clock)."""

    verdict: CallVerdict
    behind_ms: int | None
    reaction_ms: int | None
    race_deadline_ns: int | None
    play: PlayOutcome
    race_id: int | None = None
    penalised: bool = False
    """A wrong call that costs its caller a card: now, or once the open race is decided."""


class RaceEnding(enum.Enum):
    """How a race came to an end."""

    DECIDED = "decided"
    """Decided here and now: the table after it is to be shown."""
    DECIDED_ELSEWHERE = "decided_elsewhere"
    """Decided already (by another worker, or before a restart), which showed the table."""
    CALLED_OFF = "called_off"
    """The game ended (``/endgame``, idle) before the race was decided: nobody won it."""


@dataclass(frozen=True, slots=True)
class RaceOutcome:
    """How a race ended: every caller's result (by seat), and the table to show after it.

    ``play`` is set only when decided now. ``board_version``: the board the race left, while
    nothing else has changed the game since (a Flip pressed during the race acts on it).
    """

    ending: RaceEnding
    results: tuple[CallResult, ...] = ()
    user_ids: tuple[int, ...] = ()
    play: PlayOutcome | None = None
    board_version: int | None = None

    def result_of(self, user_id: int) -> CallResult | None:
        """What ``user_id`` is told about their call (None: they made none in this race)."""
        seats = {seat for seat, seated in enumerate(self.user_ids) if seated == user_id}
        return next((result for result in self.results if result.seat in seats), None)


@dataclass(frozen=True, slots=True)
class StartOutcome:
    """A started game: its lobby as it now stands, and the first table."""

    lobby: LobbyView
    play: PlayOutcome


# -- serialisation: a table, its operations and a lobby as JSON, for the durable outbox ----


def play_to_json(outcome: PlayOutcome) -> dict[str, Any]:
    """A play outcome as a JSON-ready dict (:func:`play_from_json` rebuilds it).

    >>> from telesnap.game import Game, standard_deck
    >>> game = Game()
    >>> _ = game.deal(2, dealer=0, deck=standard_deck())
    >>> outcome = PlayOutcome(TableView.of(7, game, [1, 2], ["Ann", "Bob"]), tuple(game.history))
    >>> play_from_json(play_to_json(outcome)) == outcome
    True
    """
    return {
        "table": _encode(outcome.table),
        "operations": [operation_to_json(op) for op in outcome.operations],
    }


def play_from_json(data: Mapping[str, Any]) -> PlayOutcome:
    """Rebuild what :func:`play_to_json` wrote (raises ``ValueError`` or ``SnapError`` if bad)."""
    table = _decode(TableView, data["table"])
    operations = tuple(operation_from_json(op) for op in data["operations"])
    return PlayOutcome(table, operations)


def lobby_to_json(lobby: LobbyView) -> dict[str, Any]:
    """A lobby as a JSON-ready dict (:func:`lobby_from_json` rebuilds it).

    >>> view = LobbyView(3, 1, ((1, "Ann"), (2, "Bob")), "lobby", 41)
    >>> lobby_from_json(lobby_to_json(view)) == view
    True
    """
    encoded: dict[str, Any] = _encode(lobby)
    return encoded


def lobby_from_json(data: Mapping[str, Any]) -> LobbyView:
    """Rebuild what :func:`lobby_to_json` wrote (raises ``ValueError`` if bad)."""
    lobby: LobbyView = _decode(LobbyView, {"closes_at": None, "minutes_left": None, **data})
    return lobby


def _encode(value: Any) -> Any:
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {field.name: _encode(getattr(value, field.name)) for field in fields(value)}
    if isinstance(value, tuple | list):
        return [_encode(item) for item in value]
    return value


@functools.cache
def _field_types(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _has_default(field: Field[Any]) -> bool:
    return field.default is not MISSING or field.default_factory is not MISSING


def _decode(kind: Any, data: Any) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [option for option in typing.get_args(kind) if option is not type(None)]
        return None if data is None else _decode(options[0], data)
    if origin is tuple:
        items = typing.get_args(kind)
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(_decode(items[0], value) for value in data)
        if len(items) != len(data):
            raise ValueError(f"expected {len(items)} items, not {data!r}")
        return tuple(_decode(item, value) for item, value in zip(items, data, strict=True))
    if kind is Card:
        return Card.parse(data)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(data)
    if isinstance(kind, type) and is_dataclass(kind):
        hints = _field_types(kind)
        # A field missing from older JSON takes its default (a field without one must be there).
        return kind(
            **{
                field.name: _decode(hints[field.name], data[field.name])
                for field in fields(kind)
                if field.name in data or not _has_default(field)
            }
        )
    if kind in (int, str, bool) and not isinstance(data, kind):
        raise ValueError(f"expected {kind.__name__}, not {data!r}")
    return data
