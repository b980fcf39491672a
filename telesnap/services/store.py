"""Engine games kept in memory, checked against and written to the database.

A game's engine state is rebuilt from its history the first time it is
needed and then kept; before every use the cached copy is checked against
the number of stored operations, so another worker's changes (or a rolled
back transaction) are never missed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..game import (
    EndReason,
    Game,
    Operation,
    SnapCalled,
    operation_from_json,
    operation_to_json,
)
from ..storage.models import Game as GameRow
from ..storage.models import GamePlayer, GameStatus
from ..storage.repositories import OperationRecord
from ..storage.uow import UnitOfWork
from .locks import KeyedLocks
from .settings import GameSettings
from .standings import correct_call_reaction
from .stats_recorder import record_game_result
from .timers import TimerPlanner
from .types import Actor, Place, Reason, Receipt, Refused
from .views import TableView


@dataclass
class LoadedGame:
    """An engine game with its seats' users and the settings it plays by."""

    game_id: int
    place: Place
    game: Game
    user_ids: list[int]
    names: list[str]
    settings: GameSettings
    stored_operations: int
    shown_at_ns: dict[int, int] = field(default_factory=dict)
    """Monotonic time the bot got the reply to the message showing each board version."""
    shown_messages: dict[int, tuple[int, datetime]] = field(default_factory=dict)
    """The message id and wall time of the message showing each board version."""
    afk_streaks: dict[int, int] = field(default_factory=dict)
    """Absences in a row, by seat (only seats with some)."""
    fastest_calls: dict[int, int] = field(default_factory=dict)
    """The reaction time (ms) of each seat's fastest correct call, for the final standings."""

    def note_call(self, seat: int, reaction_ms: int | None) -> None:
        """Keep ``reaction_ms`` if it is the seat's fastest correct call so far."""
        if reaction_ms is not None and reaction_ms < self.fastest_calls.get(seat, reaction_ms + 1):
            self.fastest_calls[seat] = reaction_ms

    def seat_of(self, user_id: int) -> int:
        """The seat of ``user_id``, or ``Refused(NOT_PLAYING)``."""
        try:
            return self.user_ids.index(user_id)
        except ValueError:
            raise Refused(Reason.NOT_PLAYING) from None

    def table(self) -> TableView:
        """The table as it stands."""
        return TableView.of(self.game_id, self.game, self.user_ids, self.names, self.fastest_calls)


def place_of(row: GameRow) -> Place:
    """The chat topic of a stored game."""
    return Place(chat_id=row.chat_id, thread_id=row.thread_id)


class GameStore:
    """The cache of engine games and the per-topic locks that serialise their changes."""

    def __init__(self, planner: TimerPlanner | None = None, *, shared: bool = True) -> None:
        """Keep games for one process.

        ``shared``: other processes may change the same games (several workers on
        PostgreSQL), so each use checks the cached game against the stored history.
        With SQLite the bot is one process, and the cache is the truth.
        """
        self.planner = planner or TimerPlanner()
        self._shared = shared
        self._games: dict[int, LoadedGame] = {}
        self._locks: KeyedLocks[tuple[int, int]] = KeyedLocks()

    def lock(self, place: Place) -> asyncio.Lock:
        """The lock of one chat topic: every change there runs under it.

        Keep the returned lock only while using it: a topic's lock is forgotten
        once nobody holds or awaits it.
        """
        return self._locks.get((place.chat_id, place.thread_id))

    def forget(self, game_id: int) -> None:
        """Drop a cached game (when it has ended)."""
        self._games.pop(game_id, None)

    def forget_place(self, place: Place) -> None:
        """Drop the cached games of a chat topic (after a failed transaction)."""
        for game_id, loaded in list(self._games.items()):
            if (loaded.place.chat_id, loaded.place.thread_id) == (place.chat_id, place.thread_id):
                del self._games[game_id]

    def cached(self, game_id: int) -> LoadedGame | None:
        """The cached game, if any (it may be behind the database)."""
        return self._games.get(game_id)

    async def load(self, uow: UnitOfWork, row: GameRow) -> LoadedGame:
        """The engine game of a started game row, from the cache or rebuilt from its history."""
        cached = self._games.get(row.id)
        if cached is not None and not self._shared:
            return cached
        if cached is not None and cached.stored_operations == row.history_length:
            return cached
        rows = await uow.history.load(row.id)
        game = Game.replay(operation_from_json(op.payload) for op in rows)
        players = await uow.games.list_players(row.id)
        settings = GameSettings.from_values(row.settings)
        loaded = await loaded_game(uow, row, game, players, settings, len(rows))
        if cached is not None:
            loaded.shown_at_ns, loaded.shown_messages = cached.shown_at_ns, cached.shown_messages
        loaded.afk_streaks = {
            seat: player.afk_streak for seat, player in enumerate(players) if player.afk_streak
        }
        for op in rows:
            seat = op.payload.get("seat")
            if isinstance(seat, int):
                loaded.note_call(seat, correct_call_reaction(op.payload, op.reaction_ms))
        self._games[row.id] = loaded
        return loaded

    def adopt(self, loaded: LoadedGame) -> None:
        """Keep a newly started game in the cache."""
        self._games[loaded.game_id] = loaded

    async def save(
        self,
        uow: UnitOfWork,
        row: GameRow,
        loaded: LoadedGame,
        operations: Sequence[Operation],
        *,
        actor: Actor | None,
        receipt: Receipt | None,
        reaction_ms: int | None = None,
        human: bool = True,
    ) -> None:
        """Append ``operations`` to the history, bring the game row up to date, re-arm timers.

        ``human`` is False for what a timer did: it does not count as activity.
        """
        records = [
            OperationRecord(
                kind=op.kind,
                payload=operation_to_json(op),
                user_id=actor.user_id if actor else None,
                update_id=receipt.update_id if receipt else None,
                receipt_wall_at=receipt.wall if receipt else None,
                receipt_monotonic_ns=receipt.monotonic_ns if receipt else None,
                reaction_ms=reaction_ms if op.kind == "snap_called" else None,
            )
            for op in operations
        ]
        if records:
            await uow.history.append(row.id, records, after_seq=loaded.stored_operations)
        for op, record in zip(operations, records, strict=True):
            if isinstance(op, SnapCalled):
                loaded.note_call(op.seat, correct_call_reaction(record.payload, record.reaction_ms))
        loaded.stored_operations += len(records)
        row.history_length = loaded.stored_operations
        game = loaded.game
        now = self.planner.now()
        row.board_version = game.board_version
        shown = loaded.shown_messages.get(game.board_version)
        if shown is not None and row.board_message_id != shown[0]:
            row.board_message_id, row.board_shown_at = shown
        if human:
            row.last_action_at = now
        if game.outcome is not None:
            finish_row(row, game.outcome.reason, [loaded.user_ids[s] for s in game.outcome.winners])
            row.ended_at = now
            await record_game_result(uow, row, game.history, loaded.user_ids)
            self.forget(row.id)  # an ended game is never played again
        await self.planner.after_change(uow, row, loaded.settings, tuple(operations))


async def loaded_game(
    uow: UnitOfWork,
    row: GameRow,
    game: Game,
    players: Sequence[GamePlayer],
    settings: GameSettings,
    stored_operations: int,
) -> LoadedGame:
    """A started game with its seats' users (in seat order) and their names."""
    return LoadedGame(
        game_id=row.id,
        place=place_of(row),
        game=game,
        user_ids=[player.user_id for player in players],
        names=[await name_of(uow, player.user_id) for player in players],
        settings=settings,
        stored_operations=stored_operations,
    )


def finish_row(row: GameRow, reason: EndReason, winner_ids: list[int]) -> None:
    """Mark a stored game as ended for ``reason`` with ``winner_ids``."""
    abandoned = reason is EndReason.ABANDONED
    row.status = (GameStatus.ABANDONED if abandoned else GameStatus.FINISHED).value
    row.end_reason = reason.value
    row.winner_ids = winner_ids


async def name_of(uow: UnitOfWork, user_id: int) -> str:
    """A stored user's display name ("?" for a user the bot never saw)."""
    user = await uow.users.get(user_id)
    return display_name(user.first_name, user.last_name) if user else "?"


def display_name(first_name: str, last_name: str | None) -> str:
    """A user's name as tables show it.

    >>> display_name("Ada", None), display_name("Ada", "L.")
    ('Ada', 'Ada L.')
    """
    return f"{first_name} {last_name}" if last_name else first_name
