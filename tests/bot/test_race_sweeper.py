"""The race sweeper: a race nobody decides (its worker died) is adopted by another worker."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import ADOPT_GRACE_S, RaceReferee, RaceSweeper
from telesnap.game import CallKind, CallVerdict, RaceResolved
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.rows import BoardEntry
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.races import OpenRace, RaceService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Place
from telesnap.services.views import RaceEnding, RaceOutcome
from telesnap.storage.models import RaceState
from telesnap.storage.uow import UnitsOfWork

from ..services.test_play_flow import BOB, PLACE, flip_until_match, receipt, started_game
from ..services.test_races import stored_races
from .test_referee import SIGNER, AnsweringBot

SHORT_PERIOD_S = 0.01


def astuple_of(each: Worker) -> tuple[RaceReferee, RaceSweeper, ShownRaces, RaceService]:
    return each.referee, each.sweeper, each.shown, each.races


class ShownRaces:
    """The boards a worker's decisions write (their commit wakes the chat's sender)."""

    def __init__(self, units: UnitsOfWork) -> None:
        self.outbox = OutboxService(units, watch=units.outbox_watch)
        self.chats: list[int] = []
        self.shown = asyncio.Event()
        self.outbox.on_rows(self._woken)

    def _woken(self, chat_id: int) -> None:
        self.chats.append(chat_id)
        self.shown.set()

    async def boards(self) -> list[BoardEntry]:
        entries = (await self.outbox.line(PLACE.chat_id)).entries
        return [entry for entry in entries if isinstance(entry, BoardEntry)]


@dataclass
class Worker:
    """Another worker's referee and sweeper, with its own game cache."""

    referee: RaceReferee
    sweeper: RaceSweeper
    shown: ShownRaces
    races: RaceService


def worker(sessions: async_sessionmaker[AsyncSession], **sweep: Any) -> Worker:
    """Another worker's referee and sweeper, with its own game cache."""
    units = UnitsOfWork(sessions)
    store = GameStore(shared=True)
    record_boards(store)
    races = RaceService(units, store)
    referee = RaceReferee(AnsweringBot(), races, ReceiptBook(SIGNER))  # type: ignore[arg-type]
    sweeper = RaceSweeper(referee, races, period_s=SHORT_PERIOD_S, **sweep)
    return Worker(referee, sweeper, ShownRaces(units), races)


async def open_race_of_a_dead_worker(sessions: async_sessionmaker[AsyncSession]) -> int:
    """Bob's correct Snap! is stored with its race; the worker that took it decides nothing."""
    _, play = await started_game(sessions)
    version = await flip_until_match(play)
    call = await play.call(PLACE, BOB, CallKind.SNAP, receipt(1000.0), seen_version=version)
    assert call.race_id is not None
    return version


async def test_a_race_left_open_by_a_dead_worker_is_decided_by_another_and_its_board_shown(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    version = await open_race_of_a_dead_worker(session_factory)
    referee, sweeper, shown, _ = astuple_of(worker(session_factory))
    sweeper.start()
    try:
        await asyncio.wait_for(shown.shown.wait(), timeout=10)
    finally:
        await sweeper.stop()
        await referee.close()
    assert shown.chats == [PLACE.chat_id], "the decision's board woke the chat's sender"
    decided = (await shown.boards())[-1]
    (resolved,) = [op for op in decided.board.operations if isinstance(op, RaceResolved)]
    assert [(r.seat, r.verdict) for r in resolved.results] == [(1, CallVerdict.WON)], "Bob's"
    assert decided.board.table.board_version == version + 1, "the new board goes to the chat"
    (race,) = await stored_races(session_factory)
    assert race.state == RaceState.DECIDED.value


async def test_two_workers_sweeping_the_same_race_decide_it_once(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    await open_race_of_a_dead_worker(session_factory)
    workers = [worker(session_factory) for _ in range(2)]
    both_looked = asyncio.Barrier(2)  # both find the race open before either decides it
    for each in workers:
        look = each.races.overdue_races

        async def looked(before_ns: int, look: Any = look) -> list[OpenRace]:
            found: list[OpenRace] = await look(before_ns)
            await both_looked.wait()
            return found

        each.races.overdue_races = looked  # type: ignore[method-assign]
    adopted = await asyncio.gather(*(each.sweeper.sweep() for each in workers))
    assert adopted == [1, 1]
    for each in workers:
        await each.referee.close()  # it decides the race in hand before it stops
    deciding = [each.shown for each in workers if each.shown.chats]
    assert len(deciding) == 1, "the board is written by the one deciding"
    (race,) = await stored_races(session_factory)
    assert race.state == RaceState.DECIDED.value
    game_id = race.game_id
    async with UnitsOfWork(session_factory)() as uow:
        kinds = [row.kind for row in await uow.history.load(game_id)]
    assert kinds.count("race_resolved") == 1


async def test_a_race_within_its_window_and_grace_is_left_to_its_worker(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    await open_race_of_a_dead_worker(session_factory)
    (race,) = await stored_races(session_factory)
    deadline_ns = race.deadline_ns
    grace_ns = int(ADOPT_GRACE_S * 1e9)
    referee, sweeper, _, _ = astuple_of(
        worker(session_factory, now_ns=lambda: deadline_ns + grace_ns)
    )
    assert await sweeper.sweep() == 0, "its own worker may still be waiting for its calls"
    assert not referee.is_deciding(PLACE)
    (race,) = await stored_races(session_factory)
    assert race.state == RaceState.OPEN.value
    await referee.close()


class FailingLookups:
    """A race service whose look for overdue races fails twice, then finds one race."""

    def __init__(self) -> None:
        self.looks = 0
        self.found = asyncio.Event()
        self.decided: list[int] = []

    async def overdue_races(self, deadline_before_ns: int) -> list[OpenRace]:
        self.looks += 1
        if self.looks <= 2:
            raise OSError("the database is unavailable")
        self.found.set()
        return [OpenRace(PLACE, 99, 5, deadline_at=_long_ago())]

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        self.decided.append(race_id)
        return RaceOutcome(RaceEnding.DECIDED_ELSEWHERE)


def _long_ago() -> datetime:
    return datetime.fromtimestamp(time.time() - 60, tz=UTC)


async def test_a_failing_look_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    races = FailingLookups()
    referee = RaceReferee(AnsweringBot(), races, ReceiptBook(SIGNER))  # type: ignore[arg-type]
    sweeper = RaceSweeper(referee, races, period_s=SHORT_PERIOD_S)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="telesnap.bot.referee.races"):
        sweeper.start()
        await asyncio.wait_for(races.found.wait(), timeout=10)
        await referee.wait_until_decided(PLACE)
    await sweeper.stop()
    await referee.close()
    assert races.decided == [5], "the race found after the failures is decided"
    failures = [r for r in caplog.records if "looking for overdue races failed" in r.getMessage()]
    assert len(failures) == 2
    assert failures[0].exc_info is not None, "with what went wrong"
    assert "the database is unavailable" in failures[1].getMessage(), "the same again: one line"
