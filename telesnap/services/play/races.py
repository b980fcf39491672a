"""Snap races, stored: opened with their first correct call, decided once, by whoever comes first.

A race row is written in the transaction of its first correct call. Deciding takes the
game's row lock and closes the row with a conditional update, so across workers a race is
decided once, on every call stored in the game. A worker that comes second reads the
result and the callers back from the history, so it can still answer its own callers and
those of a worker that died.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from ...game import CallVerdict, RaceResolved, SnapCalled, operation_from_json
from ...game.race import NANOSECONDS_PER_MS
from ...storage.models import Game as GameRow
from ...storage.models import GameStatus, Race, RaceState
from ...storage.uow import UnitOfWork
from ..types import Place, Receipt
from ..views import PlayOutcome, RaceEnding, RaceOutcome
from .base import Service

_ONLY_SETTLING = frozenset({"penalty_paid", "player_out", "game_ended"})
"""What a race's own decision may be followed by (its deferred penalties, and their effects)."""


@dataclass(frozen=True, slots=True)
class RaceTicket:
    """The race a correct call is in, and when its tie window closes (wall-clock ns)."""

    race_id: int
    deadline_ns: int


@dataclass(frozen=True, slots=True)
class OpenRace:
    """A race waiting to be decided: where, and when its window closes (wall time)."""

    place: Place
    game_id: int
    race_id: int
    deadline_at: datetime

    @classmethod
    def of(cls, race: Race) -> OpenRace:
        """The open race of a stored row."""
        return cls(Place(race.chat_id, race.thread_id), race.game_id, race.id, race.deadline_at)


@dataclass(frozen=True, slots=True)
class RaceCaller:
    """A correct call in a race, with the update that brought it (its press, if any)."""

    update_id: int
    user_id: int
    stamp_ns: int
    """The receipt stamp of the call (wall-clock ns): the press expires some 15 s later."""
    update: dict[str, Any]
    """The update as received (the bot layer reads the press's query id from it)."""


class AnswerPledges(Protocol):
    """Who answers which press: a worker that owes a press its answer pledges it.

    With several workers a pledge is held where all see it, until the press expires; a dead
    worker's pledges go with it.
    """

    shared: bool
    """Whether other workers may have taken the calls of a race decided here."""

    async def pledge(self, query_id: str) -> bool:
        """Take the answering of press ``query_id``; False if a live worker has it."""
        ...

    async def release_pledge(self, query_id: str) -> None:
        """Let press ``query_id`` go."""
        ...


async def enter_race(
    uow: UnitOfWork,
    row: GameRow,
    tie_window_ms: int,
    receipt: Receipt,
    call_seq: int,
    *,
    opens: bool,
) -> RaceTicket:
    """Enter a correct call (history ``call_seq``) in the game's open race, opening it if none.

    Call it in the call's transaction, under the game's row lock. ``opens``: the game had no
    race open, so none is looked for (a race row is open exactly while its game's race is).
    The window closes ``tie_window_ms`` after the earliest stamp, so an earlier-stamped call
    handled later moves the deadline earlier.
    """
    deadline_ns = receipt.stamp_ns + tie_window_ms * NANOSECONDS_PER_MS
    deadline_at = receipt.wall + timedelta(milliseconds=tie_window_ms)
    race = None if opens else await uow.races.find_open(row.id)
    if race is None:
        race = await uow.races.open(
            row.id,
            row.chat_id,
            row.thread_id,
            opened_seq=call_seq,
            deadline_ns=deadline_ns,
            deadline_at=deadline_at,
        )
    elif deadline_ns < race.deadline_ns:
        race.deadline_ns, race.deadline_at = deadline_ns, deadline_at
    return RaceTicket(race.id, race.deadline_ns)


class RaceService(Service):
    """Decide stored races, and list the ones still open."""

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        """Decide the race, or say how it ended; database and history errors go up for a retry."""
        async with self._change(place, None) as uow:
            # The game's row lock first (as every change takes it), then the race afresh.
            row = await uow.races.lock_game_of(race_id)
            race = await uow.races.get(race_id)
            if race is None:
                return RaceOutcome(RaceEnding.CALLED_OFF)
            if race.state == RaceState.DECIDED.value and row is not None:
                return await self._read_back(uow, row, race)
            if race.state != RaceState.OPEN.value:
                return RaceOutcome(RaceEnding.CALLED_OFF)
            if row is None or row.status != GameStatus.RUNNING.value:
                await uow.races.close(race.id, RaceState.ENDED)
                return RaceOutcome(RaceEnding.CALLED_OFF)
            self._store.keep_row(place, row)  # read afresh: the topic's next change uses it
            loaded = await self._store.load(uow, row)
            game = loaded.game
            if not game.is_race_open:
                await uow.races.close(race.id, RaceState.ENDED)
                return RaceOutcome(RaceEnding.CALLED_OFF)
            resolved_seq = loaded.stored_operations + 1
            resolved, operations = await self._apply(
                uow,
                row,
                loaded,
                lambda: game.resolve_race(loaded.settings.tie_window_ms),
                actor=None,
                receipt=None,
            )
            if not await uow.races.close(race.id, RaceState.DECIDED, resolved_seq):
                raise RuntimeError(f"race {race.id} of game {row.id} was decided twice")
            return RaceOutcome(
                RaceEnding.DECIDED,
                resolved.results,
                tuple(loaded.user_ids),
                PlayOutcome(loaded.table(), operations),
                None if game.is_over else game.board_version,
            )

    async def _read_back(self, uow: UnitOfWork, row: GameRow, race: Race) -> RaceOutcome:
        """The result of a race decided already, from its stored ``RaceResolved`` operation."""
        assert race.decided_seq is not None
        stored = await uow.history.load(row.id, after_seq=race.decided_seq - 1)
        resolved = operation_from_json(stored[0].payload)
        if not isinstance(resolved, RaceResolved):
            raise RuntimeError(f"operation {race.decided_seq} of game {row.id} decides no race")
        user_ids = [player.user_id for player in await uow.games.list_players(row.id)]
        untouched = row.status == GameStatus.RUNNING.value and all(
            op.kind in _ONLY_SETTLING for op in stored[1:]
        )
        return RaceOutcome(
            RaceEnding.DECIDED_ELSEWHERE,
            resolved.results,
            tuple(user_ids),
            board_version=(await self._store.load(uow, row)).game.board_version
            if untouched
            else None,
        )

    async def callers(self, race_id: int) -> list[RaceCaller]:
        """The correct calls made before the race was decided whose update the inbox still holds."""
        async with self._units(read_only=True) as uow:
            race = await uow.races.get(race_id)
            if race is None:
                return []
            rows = await uow.history.load(race.game_id, after_seq=race.opened_seq - 1)
            calls = {
                row.update_id: row.user_id
                for row in rows
                if row.kind == SnapCalled.kind
                and row.update_id is not None
                and row.user_id is not None
                and (race.decided_seq is None or row.seq < race.decided_seq)
                and _is_correct_call(row.payload)
            }
            stored = await uow.updates.stored_updates(list(calls))
        return [
            RaceCaller(update.update_id, calls[update.update_id], update.stamp_ns, update.payload)
            for update in stored
        ]

    async def open_races(self) -> list[OpenRace]:
        """Every race not decided yet (after a restart they are decided at once)."""
        async with self._units() as uow:
            return [OpenRace.of(race) for race in await uow.races.list_open()]

    async def overdue_races(self, deadline_before_ns: int) -> list[OpenRace]:
        """The races still open whose window closed before ``deadline_before_ns`` (wall ns).

        Their worker may have died: each worker looks for them now and then and adopts them.
        """
        async with self._units() as uow:
            return [OpenRace.of(race) for race in await uow.races.list_overdue(deadline_before_ns)]

    async def open_race(self, place: Place) -> OpenRace | None:
        """The open race of the topic's running game, if any (whichever worker opened it)."""
        async with self._units() as uow:
            row = await uow.games.find_active(place.chat_id, place.thread_id, lock=False)
            race = None if row is None else await uow.races.find_open(row.id)
            return None if race is None else OpenRace.of(race)


def _is_correct_call(payload: dict[str, Any]) -> bool:
    """Whether a stored ``snap_called`` entered a race (a wrong call was answered at once)."""
    called = operation_from_json(payload)
    return isinstance(called, SnapCalled) and called.verdict is CallVerdict.PENDING
