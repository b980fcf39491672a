"""The game store emits domain events; their handlers run in the change's transaction."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import EndReason
from telesnap.game import GameEnded as EngineGameEnded
from telesnap.services.play.events import GameChanged, GameEnded, default_events
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.timers.planner import TimerPlanner
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .test_play_flow import ANN, BOB, CID, PLACE, receipt


async def _started(sessions: async_sessionmaker[AsyncSession], store: GameStore) -> LobbyService:
    lobby = LobbyService(UnitsOfWork(sessions), store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.join(PLACE, CID, receipt())
    await lobby.start(PLACE, ANN, is_admin=known_admin(False), receipt=receipt())
    return lobby


async def test_an_ended_game_is_announced_once_before_its_last_change(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    planner = TimerPlanner()
    events = default_events(planner)
    seen: list[GameEnded | GameChanged] = []

    async def note(uow: UnitOfWork, event: GameEnded | GameChanged) -> None:
        seen.append(event)

    events.subscribe(GameEnded, note)
    events.subscribe(GameChanged, note)
    lobby = await _started(session_factory, GameStore(planner, events=events))
    assert [type(event) for event in seen] == [GameChanged]  # the start
    await lobby.end(PLACE, ANN, is_admin=known_admin(True), receipt=receipt())

    ended, changed = seen[1:]
    assert isinstance(ended, GameEnded)
    assert isinstance(changed, GameChanged)
    assert ended.row.end_reason == EndReason.ABANDONED.value
    assert list(ended.user_ids) == [ANN.user_id, BOB.user_id, CID.user_id]
    assert any(isinstance(op, EngineGameEnded) for op in changed.operations)


async def test_a_failing_handler_rolls_the_change_back(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    planner = TimerPlanner()
    events = default_events(planner)

    async def fail(uow: UnitOfWork, event: GameEnded) -> None:
        raise RuntimeError("the stats store is down")

    events.subscribe(GameEnded, fail)
    lobby = await _started(session_factory, GameStore(planner, events=events))
    with pytest.raises(RuntimeError):
        await lobby.end(PLACE, ANN, is_admin=known_admin(True), receipt=receipt())

    table = (await PlayService(UnitsOfWork(session_factory), GameStore()).table(PLACE)).table
    assert table.final is None  # still running: the end was not committed
