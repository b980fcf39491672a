"""Stored races: written with the first correct call, decided once, on every worker's calls."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict, EndReason
from telesnap.services.play.races import RaceService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.views import RaceEnding
from telesnap.storage.models import Race, RaceState
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .test_play_flow import ANN, BOB, CID, PLACE, flip_until_match, receipt, started_game
from .test_timers import PLACE as TIMER_PLACE
from .test_timers import Clock, start, turn_actor, world_with
from .test_timers import receipt as timer_receipt


async def stored_races(sessions: async_sessionmaker[AsyncSession]) -> list[Race]:
    async with UnitOfWork(sessions) as uow:
        return list(await uow.session.scalars(select(Race).order_by(Race.id)))


async def test_the_first_correct_call_writes_the_race_with_its_deadline_on_both_clocks(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)
    bob_receipt = receipt(1040.0)
    bob = await play.call(PLACE, BOB, CallKind.SNAP, bob_receipt, seen_version=version)
    (race,) = await stored_races(session_factory)
    assert race.id == bob.race_id
    assert race.state == RaceState.OPEN.value
    assert race.deadline_ns == (1140 * 1_000_000)
    assert race.deadline_at == bob_receipt.wall + timedelta(milliseconds=100)
    # An earlier stamp handled later moves the deadline earlier, in the same race.
    ann_receipt = receipt(1000.0)
    ann = await play.call(PLACE, ANN, CallKind.SNAP, ann_receipt, seen_version=version)
    assert ann.race_id == bob.race_id
    (race,) = await stored_races(session_factory)
    assert race.deadline_ns == ann.race_deadline_ns == (1100 * 1_000_000)
    assert race.deadline_at == ann_receipt.wall + timedelta(milliseconds=100)


async def test_a_second_worker_reads_the_result_back_and_nobody_decides_twice(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Two workers (each with its own cache) take one call each; both try to decide."""
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)
    workers = [GameStore(shared=True), GameStore(shared=True)]
    plays = [PlayService(UnitsOfWork(session_factory), store) for store in workers]
    races = [RaceService(UnitsOfWork(session_factory), store) for store in workers]
    ann = await plays[0].call(PLACE, ANN, CallKind.SNAP, receipt(1000.0), seen_version=version)
    bob = await plays[1].call(PLACE, BOB, CallKind.SNAP, receipt(1040.0), seen_version=version)
    assert ann.race_id == bob.race_id is not None
    outcomes = await asyncio.gather(*(service.decide(PLACE, ann.race_id) for service in races))
    endings = sorted(outcome.ending.value for outcome in outcomes)
    assert endings == [RaceEnding.DECIDED.value, RaceEnding.DECIDED_ELSEWHERE.value]
    for outcome in outcomes:
        # Whoever decided saw both calls, though each worker took only one of them.
        verdicts = {outcome.user_ids[r.seat]: r.verdict for r in outcome.results}
        assert verdicts == {ANN.user_id: CallVerdict.TIED, BOB.user_id: CallVerdict.TIED}
        assert outcome.board_version == version + 1
    (decided,) = [outcome for outcome in outcomes if outcome.ending is RaceEnding.DECIDED]
    assert decided.play is not None
    assert [op.kind for op in decided.play.operations] == ["race_resolved"]
    (race,) = await stored_races(session_factory)
    assert race.state == RaceState.DECIDED.value
    async with UnitOfWork(session_factory) as uow:
        kinds = [row.kind for row in await uow.history.load(race.game_id)]
    assert kinds.count("race_resolved") == 1
    assert race.decided_seq == kinds.index("race_resolved") + 1


async def test_a_race_the_end_of_the_game_overtook_is_called_off(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby, play = await started_game(session_factory)
    version = await flip_until_match(play)
    call = await play.call(PLACE, CID, CallKind.SNAP, receipt(1000.0), seen_version=version)
    assert call.race_id is not None
    ended = await lobby.end(PLACE, ANN, is_admin=known_admin(True), receipt=receipt())
    assert ended is not None
    assert ended.table.end_reason is EndReason.ABANDONED
    races = RaceService(UnitsOfWork(session_factory), GameStore())
    outcome = await races.decide(PLACE, call.race_id)
    assert outcome.ending is RaceEnding.CALLED_OFF
    assert outcome.results == ()
    assert outcome.play is None
    (race,) = await stored_races(session_factory)
    assert race.state == RaceState.ENDED.value
    assert await races.open_races() == []
    assert (await races.decide(PLACE, call.race_id)).ending is RaceEnding.CALLED_OFF


async def test_open_races_lists_what_a_restart_must_decide(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)
    call = await play.call(PLACE, BOB, CallKind.SNAP, receipt(1000.0), seen_version=version)
    restarted = RaceService(UnitsOfWork(session_factory), GameStore())
    (open_race,) = await restarted.open_races()
    assert (open_race.race_id, open_race.place.chat_id) == (call.race_id, PLACE.chat_id)
    assert await restarted.open_race(PLACE) == open_race
    outcome = await restarted.decide(open_race.place, open_race.race_id)
    assert outcome.ending is RaceEnding.DECIDED
    assert [(outcome.user_ids[r.seat], r.verdict) for r in outcome.results] == [
        (BOB.user_id, CallVerdict.WON)
    ]
    assert await restarted.open_races() == []
    assert await restarted.open_race(PLACE) is None


async def test_a_call_whose_transaction_fails_leaves_no_race(
    session_factory: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race is written in the transaction of its call: both go in, or neither."""
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)

    async def failing_save(*args: object, **kwargs: object) -> None:
        raise OSError("the disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(GameStore, "save", failing_save)
        with pytest.raises(OSError, match="disk is full"):
            await play.call(PLACE, ANN, CallKind.SNAP, receipt(1000.0), seen_version=version)
    assert await stored_races(session_factory) == []
    call = await play.call(PLACE, ANN, CallKind.SNAP, receipt(1001.0), seen_version=version)
    assert [race.id for race in await stored_races(session_factory)] == [call.race_id]


async def test_a_race_left_open_until_the_game_is_abandoned_as_idle_is_called_off(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Its decision kept failing for as long as the game's idle limit: nobody wins it."""
    clock = Clock()
    world = await world_with(session_factory, clock, turn_timer="off", idle_limit="60")
    await start(world)
    for _ in range(60):
        table = (await world.play.table(TIMER_PLACE)).table
        ranks = [player.top.rank for player in table.players if player.top]
        if len(ranks) != len(set(ranks)):
            break
        await world.play.flip(TIMER_PLACE, await turn_actor(world), timer_receipt())
    call = await world.play.call(
        TIMER_PLACE, ANN, CallKind.SNAP, timer_receipt(), seen_version=table.board_version
    )
    assert call.verdict is CallVerdict.PENDING
    assert call.race_id is not None
    clock.advance(minutes=61)
    (abandoned,) = await world.timers.fire_due()
    assert abandoned.play is not None
    assert abandoned.play.table.end_reason is EndReason.ABANDONED
    races = RaceService(UnitsOfWork(session_factory), GameStore())
    assert (await races.decide(TIMER_PLACE, call.race_id)).ending is RaceEnding.CALLED_OFF
