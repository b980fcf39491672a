"""Services end to end on a real database: lobby, start, flips, calls and races."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict, EndReason, Game, operation_from_json
from telesnap.services.chat_settings import SettingsService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.races import RaceService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Reason, Receipt, Refused, Topic
from telesnap.services.views import RaceEnding
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .race_helpers import decide_open_race

PLACE = Place(chat_id=-100, chat_type="group", title="Snap club")
ANN, BOB, CID = Actor(1, "Ann"), Actor(2, "Bob"), Actor(3, "Cid")
_update_ids = itertools.count(1000)
_CLOCK_ZERO = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)


def receipt(stamp_ms: float = 0.0, update_id: int | None = None) -> Receipt:
    return Receipt(
        stamp_ns=int(stamp_ms * 1_000_000),
        wall=_CLOCK_ZERO + timedelta(milliseconds=stamp_ms),  # the two clocks agree
        update_id=next(_update_ids) if update_id is None else update_id,
    )


async def started_game(
    sessions: async_sessionmaker[AsyncSession], seed: int = 3
) -> tuple[LobbyService, PlayService]:
    store = GameStore()
    lobby = LobbyService(UnitsOfWork(sessions), store, shuffle_seed=seed)
    play = PlayService(UnitsOfWork(sessions), store)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.join(PLACE, CID, receipt())
    await lobby.start(PLACE, ANN, is_admin=known_admin(False), receipt=receipt())
    return lobby, play


async def flip_until_match(play: PlayService) -> int:
    """Flip in turn until a Snap! is correct; return the board version showing it."""
    for _ in range(60):
        table = (await play.table(PLACE)).table
        ranks = [p.top.rank for p in table.players if p.top]
        if len(ranks) != len(set(ranks)):
            return table.board_version
        turn = table.turn_player
        assert turn is not None
        await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    pytest.fail("no match in 60 flips")


async def test_lobby_refuses_a_second_game_and_a_double_join(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby = LobbyService(UnitsOfWork(session_factory), GameStore())
    view = await lobby.open(PLACE, ANN, receipt())
    assert view.lobby.player_names == ("Ann",)
    with pytest.raises(Refused) as second:
        await lobby.open(PLACE, BOB, receipt())
    assert second.value.reason is Reason.GAME_EXISTS
    with pytest.raises(Refused) as double:
        await lobby.join(PLACE, ANN, receipt())
    assert double.value.reason is Reason.ALREADY_JOINED
    with pytest.raises(Refused) as too_few:
        await lobby.start(PLACE, ANN, is_admin=known_admin(False), receipt=receipt())
    assert too_few.value.reason is Reason.TOO_FEW_PLAYERS


async def test_only_the_player_whose_turn_it_is_may_flip(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    table = (await play.table(PLACE)).table
    turn = table.turn_player
    assert turn is not None
    other = next(p for p in table.players if p.seat != turn.seat)
    with pytest.raises(Refused) as refused:
        await play.flip(PLACE, Actor(other.user_id, other.name), receipt())
    assert refused.value.reason is Reason.NOT_YOUR_TURN
    outcome = await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt())
    assert outcome.table.flips == 1


async def test_a_redelivered_update_changes_nothing(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    turn = (await play.table(PLACE)).table.turn_player
    assert turn is not None
    press = receipt()
    await play.flip(PLACE, Actor(turn.user_id, turn.name), press)
    with pytest.raises(Refused) as again:
        await play.flip(PLACE, Actor(turn.user_id, turn.name), press)
    assert again.value.reason is Reason.DUPLICATE_UPDATE
    assert (await play.table(PLACE)).table.flips == 1


@pytest.mark.parametrize(("window", "expected"), [(100, CallVerdict.TIED), (20, CallVerdict.WON)])
@pytest.mark.parametrize("reverse", [False, True], ids=["in-order", "reversed"])
async def test_race_decided_by_stamps_whatever_the_arrival_order(
    session_factory: async_sessionmaker[AsyncSession],
    window: int,
    expected: CallVerdict,
    reverse: bool,
) -> None:
    async with UnitOfWork(session_factory) as uow:
        await uow.chats.upsert(PLACE.chat_id, "group")
        await uow.settings.save_values(PLACE.chat_id, 0, {"tie_window_ms": window})
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)
    calls = [(ANN, 1000.0, 5001), (BOB, 1040.0, 5002)]
    if reverse:
        calls.reverse()
    for actor, stamp, update_id in calls:
        outcome = await play.call(
            PLACE, actor, CallKind.SNAP, receipt(stamp, update_id), seen_version=version
        )
        assert outcome.verdict is CallVerdict.PENDING
    # The window closes `window` ms after the earliest stamp, whichever call came first.
    assert outcome.race_deadline_ns == int((1000 + window) * 1_000_000)
    races = RaceService(UnitsOfWork(session_factory), play._store)
    race = await races.decide(PLACE, outcome.race_id or 0)
    assert race.ending is RaceEnding.DECIDED
    assert race.play is not None
    ann, bob = race.result_of(ANN.user_id), race.result_of(BOB.user_id)
    assert ann is not None
    assert bob is not None
    assert ann.verdict is expected
    assert bob.verdict is (
        CallVerdict.TIED if expected is CallVerdict.TIED else CallVerdict.TOO_SLOW
    )
    assert race.result_of(CID.user_id) is None  # seated, but made no call
    if expected is CallVerdict.TIED:
        assert race.play.table.pot_size > 0
    assert await decide_open_race(races, PLACE) is None


async def test_history_in_the_database_replays_to_the_table(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby, play = await started_game(session_factory)
    await flip_until_match(play)
    ended = await lobby.end(PLACE, ANN, is_admin=known_admin(False), receipt=receipt())
    assert ended is not None
    assert ended.table.end_reason is EndReason.ABANDONED
    async with UnitOfWork(session_factory) as uow:
        rows = await uow.history.load(ended.table.game_id)
    replayed = Game.replay(operation_from_json(row.payload) for row in rows)
    assert replayed.flips == ended.table.flips
    assert replayed.outcome is not None
    assert [row.seq for row in rows] == list(range(1, len(rows) + 1))


async def test_a_running_game_keeps_the_settings_it_started_with(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    settings = SettingsService(UnitsOfWork(session_factory), GameStore())
    await settings.change(PLACE, ANN, "tie_window", "0", is_admin=known_admin(True))
    version = await flip_until_match(play)
    for actor, stamp in ((ANN, 1000.0), (BOB, 1040.0)):
        await play.call(PLACE, actor, CallKind.SNAP, receipt(stamp), seen_version=version)
    race = await decide_open_race(RaceService(UnitsOfWork(session_factory), play._store), PLACE)
    assert race is not None
    assert {result.verdict for result in race.results} == {CallVerdict.TIED}
    assert (await settings.show(PLACE)).tie_window_ms == 0


async def test_a_wrong_call_while_a_race_is_open_is_told_it_costs_a_card(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Its penalty is paid once the race is decided, but its caller learns of it now."""
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)
    opened = await play.call(PLACE, ANN, CallKind.SNAP, receipt(1000.0), seen_version=version)
    assert opened.verdict is CallVerdict.PENDING
    wrong = await play.call(PLACE, BOB, CallKind.SNAP_POT, receipt(1010.0), seen_version=version)
    assert wrong.verdict is CallVerdict.WRONG, "the pot is empty: nothing matches it"
    assert not any(op.kind == "penalty_paid" for op in wrong.play.operations), "not paid yet"
    assert wrong.penalised
    races = RaceService(UnitsOfWork(session_factory), play._store)
    race = await races.decide(PLACE, opened.race_id or 0)
    assert race.play is not None
    assert any(op.kind == "penalty_paid" for op in race.play.operations), "paid after the race"


async def test_the_store_knows_who_plays_in_a_running_game(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """What the intake gate asks: a seated player passes a flooded chat's budget."""
    store = GameStore()
    lobby = LobbyService(UnitsOfWork(session_factory), store, shuffle_seed=3)
    play = PlayService(UnitsOfWork(session_factory), store)
    await lobby.open(PLACE, ANN, receipt())
    for player in (BOB, CID):
        await lobby.join(PLACE, player, receipt())
    await lobby.start(PLACE, ANN, is_admin=known_admin(False), receipt=receipt())
    game_id = (await play.table(PLACE)).table.game_id
    assert store.plays_in(game_id, PLACE.topic, BOB.user_id)
    assert not store.plays_in(game_id, PLACE.topic, 999), "not seated"
    assert not store.plays_in(game_id, Topic(PLACE.chat_id, 5), BOB.user_id), "another topic"
    await lobby.leave(PLACE, BOB, receipt())
    assert not store.plays_in(game_id, PLACE.topic, BOB.user_id), "left"
