"""Engine games kept in memory, checked against and written to the database.

A game is rebuilt from its history when first needed, then kept (the most recently used
only); where workers share the database, each use checks it against the stored operation
count, so another worker's changes are never missed. A move writes only its operations:
the game row changes at start and end, and the timers' times are the history's own. A
failed change leaves no trace in the cache (see :meth:`GameStore.refused`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import inspect

from ...game import (
    CardFlipped,
    EndReason,
    Game,
    GameStarted,
    Operation,
    SeatStatus,
    SnapCalled,
    TurnSkipped,
)
from ...storage.games_watch import foreign_writes, keep, let_go
from ...storage.models import Game as GameRow
from ...storage.models import GamePlayer, GameStatus
from ...storage.repositories import OperationRecord
from ...storage.uow import UnitOfWork
from ...support.bounded import BoundedDict
from ..settings import GameSettings
from ..stats.standings import correct_call_reaction
from ..timers.planner import TimerPlanner
from ..types import (
    UNKNOWN_NAME,
    Actor,
    Place,
    Reason,
    Receipt,
    Refused,
    Topic,
    display_name,
    told_apart,
)
from ..views import TableView
from .events import DomainEvents, GameChanged, GameEnded, default_events
from .locks import KeyedLocks


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
    stored_turn: int
    """Whose turn it was when the game was last stored (to tell when the turn passed)."""
    turn_started_at: datetime
    """When the current turn began (the turn timer runs from it, see ``timers``)."""
    last_action_at: datetime
    """When a player last moved (a game idle too long is abandoned)."""
    afk_streaks: dict[int, int] = field(default_factory=dict)
    """Absences in a row, by seat (only seats with some)."""
    fastest_calls: dict[int, int] = field(default_factory=dict)
    """The reaction time (ms) of each seat's fastest correct call, for the final standings."""
    erased_seats: set[int] = field(default_factory=set)
    """Seats shown under the name their person's erasure gave them (it never changes again)."""

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
        return TableView.of(
            self.game_id,
            self.game,
            self.user_ids,
            self.names,
            self.fastest_calls,
            flip_limit=self.settings.flip_limit,
            board_style=self.settings.board_style,
        )


def place_of(row: GameRow) -> Place:
    """The chat topic of a stored game."""
    return Place(chat_id=row.chat_id, thread_id=row.thread_id)


_NEW_TURNS = (GameStarted, CardFlipped, TurnSkipped)
"""Operations that always start a turn (even when the same player is on turn again)."""


def starts_a_turn(operations: Sequence[Operation], turn_before: int, turn_after: int) -> bool:
    """Whether the turn after ``operations`` is a new one: a flip, a skip, or another seat's."""
    return turn_after != turn_before or any(isinstance(op, _NEW_TURNS) for op in operations)


DEFAULT_CAPACITY = 1000
"""How many games a store keeps in memory at most (the least recently used go first)."""


class GameStore:
    """The cache of engine games and the per-topic lock that serialises their changes."""

    def __init__(
        self,
        planner: TimerPlanner | None = None,
        *,
        shared: bool = True,
        capacity: int = DEFAULT_CAPACITY,
        events: DomainEvents | None = None,
    ) -> None:
        """Keep up to ``capacity`` games for one process.

        ``shared``: other processes may change the same games (PostgreSQL workers), so each use
        checks the cache against the history; with SQLite (one process) the cache is the truth.
        ``events``: who handles what :meth:`save` emits (default: :func:`.events.default_events`).
        """
        if capacity < 1:
            raise ValueError("a game store keeps at least one game")
        self.planner = planner or TimerPlanner()
        self.events = events if events is not None else default_events(self.planner)
        self._shared = shared
        self._saved_uncommitted: set[int] = set()
        # Dropping the oldest is safe even for a game a change is using: it is rebuilt
        # from its history next time.
        self._games: BoundedDict[int, LoadedGame] = BoundedDict(
            capacity, on_drop=lambda game_id, _: self._saved_uncommitted.discard(game_id)
        )
        self._locks: KeyedLocks[Topic] = KeyedLocks()
        self._rows: dict[Topic, tuple[GameRow, int]] = {}
        """One process: each topic's running game row as its last change left it, and the
        count of foreign writes to games then (:mod:`telesnap.storage.games_watch`)."""

    def lock(self, place: Place) -> asyncio.Lock:
        """The lock of one chat topic: every change there runs under it, whatever asks.

        Updates, Snap calls, timers, the referee and resuming at start all change a topic's games
        through ``Service._change`` (the inbox's topic line only orders updates). Keep the lock
        only while using it: it is forgotten once nobody holds or awaits it.
        """
        return self._locks.get(place.topic)

    def forget(self, game_id: int) -> None:
        """Drop a cached game (when it has ended)."""
        self._drop(game_id)

    def forget_place(self, place: Place) -> None:
        """Drop the cached games of a chat topic (after a failed transaction)."""
        self._drop_row(place.topic)
        for game_id in self._games_of(place):
            self._drop(game_id)

    def committed(self, place: Place) -> None:
        """The topic's change is committed: what it saved is the stored truth now."""
        for game_id in list(self._saved_uncommitted):  # a few games, not the whole cache
            loaded = self._games.get(game_id)
            if loaded is None or loaded.place.topic == place.topic:
                self._saved_uncommitted.discard(game_id)

    def refused(self, place: Place) -> None:
        """The topic's change was refused and rolled back: drop what it changed, keep the rest.

        A game saved in the rolled-back transaction, or holding unstored operations, no longer
        matches the database; the topic's kept row went with the session, so it is read again.
        """
        self._drop_row(place.topic)
        for game_id in self._games_of(place):
            loaded = self._games[game_id]
            if (
                game_id in self._saved_uncommitted
                or len(loaded.game.history) != loaded.stored_operations
            ):
                self._drop(game_id)

    def kept_row(self, uow: UnitOfWork, place: Place) -> GameRow | None:
        """The topic's running game row as its last change left it, now in ``uow`` (no read).

        One process only, while nothing else wrote games and it matches its cached game; else None.
        """
        kept = self._rows.get(place.topic)
        if kept is None:
            return None
        row, writes = kept
        loaded = self._games.get(row.id)
        state = inspect(row)
        if (
            writes != foreign_writes()
            or loaded is None
            or row.status != GameStatus.RUNNING.value
            or not state.detached
            or state.expired_attributes
        ):
            self._drop_row(place.topic)
            return None
        uow.session.add(row)
        return row

    def keep_row(self, place: Place, row: GameRow) -> None:
        """Keep the topic's running game ``row``, read (locked) for the change now open."""
        if self._shared or row.status != GameStatus.RUNNING.value:
            return
        known = self._rows.get(place.topic)
        if known is not None and known[0] is row:
            return
        self._drop_row(place.topic)
        keep(row)
        self._rows[place.topic] = (row, foreign_writes())

    def _drop_row(self, topic: Topic) -> None:
        kept = self._rows.pop(topic, None)
        if kept is not None:
            let_go(kept[0])

    def cached(self, game_id: int) -> LoadedGame | None:
        """The cached game, if any (it may be behind the database)."""
        return self._games.get(game_id)

    def plays_in(self, game_id: int, topic: Topic, user_id: int) -> bool:
        """Whether ``user_id`` has a seat still in the cached running game of ``topic``."""
        loaded = self._games.get(game_id)
        if loaded is None or loaded.place.topic != topic or loaded.game.is_over:
            return False
        seats = loaded.game.seats
        return any(
            user == user_id and seats[seat].status is not SeatStatus.LEFT
            for seat, user in enumerate(loaded.user_ids)
        )

    def __len__(self) -> int:
        """How many games are cached."""
        return len(self._games)

    async def load(self, uow: UnitOfWork, row: GameRow) -> LoadedGame:
        """The engine game of a started game row, from the cache or rebuilt from its history."""
        cached = self._games.get(row.id)
        if cached is not None and (
            not self._shared or cached.stored_operations == await uow.history.last_seq(row.id)
        ):
            self._games.touch(row.id)
            await _rename_erased(uow, cached)
            return cached
        rows = await uow.history.operations(row.id)
        game = Game()
        players = await uow.games.list_players(row.id)
        settings = GameSettings.from_values(row.settings)
        loaded = await loaded_game(uow, row, game, players, settings, len(rows))
        for op in rows:  # the times as a move left them (see save)
            turn_before = game.turn
            game.carry_out(op.operation)
            at = op.recorded_at or loaded.turn_started_at
            if starts_a_turn((op.operation,), turn_before, game.turn):
                loaded.turn_started_at = at
            if op.user_id is not None:
                loaded.last_action_at = at
        loaded.stored_turn = game.turn
        loaded.afk_streaks = {
            seat: player.afk_streak for seat, player in enumerate(players) if player.afk_streak
        }
        for op in rows:
            if isinstance(op.operation, SnapCalled):
                loaded.note_call(
                    op.operation.seat, correct_call_reaction(op.operation, op.reaction_ms)
                )
        self._games[loaded.game_id] = loaded
        return loaded

    def adopt(self, loaded: LoadedGame) -> None:
        """Keep a newly started game (saved in the change still open) in the cache."""
        self._games[loaded.game_id] = loaded
        self._saved_uncommitted.add(loaded.game_id)

    def _drop(self, game_id: int) -> None:
        loaded = self._games.pop(game_id, None)
        self._saved_uncommitted.discard(game_id)
        if loaded is not None:
            kept = self._rows.get(loaded.place.topic)
            if kept is not None and kept[0].id == game_id:
                self._drop_row(loaded.place.topic)

    def _games_of(self, place: Place) -> list[int]:
        return [
            game_id for game_id, loaded in self._games.items() if loaded.place.topic == place.topic
        ]

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
    ) -> None:
        """Append ``operations`` to the history, note the turn and the activity, emit the events.

        :class:`.events.GameEnded` (if it ended), then :class:`.events.GameChanged`, are handled in
        ``uow`` before it commits. Only a player's move (``actor``) counts as activity.
        """
        records = [
            OperationRecord(
                operation=op,
                user_id=actor.user_id if actor else None,
                update_id=receipt.update_id if receipt else None,
                receipt_wall_at=receipt.wall if receipt else None,
                receipt_stamp_ns=receipt.stamp_ns if receipt else None,
                receipt_host_id=receipt.host_id or None if receipt else None,
                reaction_ms=reaction_ms if op.kind == "snap_called" else None,
            )
            for op in operations
        ]
        now = self.planner.now()
        if records:
            await uow.history.append(
                row.id, records, after_seq=loaded.stored_operations, recorded_at=now
            )
        for op, record in zip(operations, records, strict=True):
            if isinstance(op, SnapCalled):
                loaded.note_call(op.seat, correct_call_reaction(op, record.reaction_ms))
        loaded.stored_operations += len(records)
        if loaded.game_id in self._games:
            self._saved_uncommitted.add(loaded.game_id)
        game = loaded.game
        if starts_a_turn(operations, loaded.stored_turn, game.turn):
            loaded.turn_started_at = now
        loaded.stored_turn = game.turn
        if actor is not None:
            loaded.last_action_at = now
        if game.outcome is not None:
            finish_row(row, game.outcome.reason, [loaded.user_ids[s] for s in game.outcome.winners])
            row.ended_at = now
            await self.events.emit(uow, GameEnded(row, game.history, loaded.user_ids))
            self.forget(row.id)  # an ended game is never played again
        await self.events.emit(
            uow, GameChanged(row, loaded.settings, tuple(operations), loaded.turn_started_at)
        )


async def loaded_game(
    uow: UnitOfWork,
    row: GameRow,
    game: Game,
    players: Sequence[GamePlayer],
    settings: GameSettings,
    stored_operations: int,
) -> LoadedGame:
    """A started game with its seats' users (in seat order) and their names.

    A seat whose person erased their data keeps the name the erasure gave it.
    """
    user_ids = [player.user_id for player in players]
    names = await names_of(uow, user_ids)
    return LoadedGame(
        game_id=row.id,
        place=place_of(row),
        game=game,
        user_ids=user_ids,
        names=[player.shown_name or name for player, name in zip(players, names, strict=True)],
        settings=settings,
        stored_operations=stored_operations,
        stored_turn=game.turn,
        turn_started_at=row.started_at or row.created_at,
        last_action_at=row.started_at or row.created_at,
        erased_seats={seat for seat, player in enumerate(players) if player.shown_name},
    )


async def _rename_erased(uow: UnitOfWork, loaded: LoadedGame) -> None:
    """Name a seat whose person left, then erased their data, as the erasure did.

    The erasure writes no history, all a cached game is checked against, in any worker: while a
    seat that left keeps its old name, the seats are read again (a seated person cannot erase).
    """
    if all(
        seat.status is not SeatStatus.LEFT or index in loaded.erased_seats
        for index, seat in enumerate(loaded.game.seats)
    ):
        return
    for player in await uow.games.list_players(loaded.game_id):
        if player.shown_name is not None and player.user_id in loaded.user_ids:
            seat = loaded.user_ids.index(player.user_id)
            loaded.names[seat] = player.shown_name
            loaded.erased_seats.add(seat)


def finish_row(row: GameRow, reason: EndReason, winner_ids: list[int]) -> None:
    """Mark a stored game as ended for ``reason`` with ``winner_ids``."""
    abandoned = reason is EndReason.ABANDONED
    row.status = (GameStatus.ABANDONED if abandoned else GameStatus.FINISHED).value
    row.end_reason = reason.value
    row.winner_ids = winner_ids


async def names_of(uow: UnitOfWork, user_ids: Sequence[int]) -> list[str]:
    """Stored users' display names, in the order given ("?" for a user the bot never saw).

    Seats of one game, so names two of them share are told apart (:func:`told_apart`).
    """
    users = [*map((await uow.users.get_many(user_ids)).get, user_ids)]
    return told_apart(
        [
            display_name(user.first_name, user.last_name, user.username) if user else UNKNOWN_NAME
            for user in users
        ],
        [user.username if user else None for user in users],
    )
