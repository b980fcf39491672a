"""Refusals change nothing, and reaction times come from the stored time each board was shown."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict, SnapError
from telesnap.services.play.base import Service, refusal_for
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Reason, Receipt, Refused
from telesnap.services.views import PlayerView, TableView
from telesnap.storage.models import GameOperation
from telesnap.storage.uow import UnitsOfWork

from ..admin import known_admin
from .boards_sent import board_sent

PLACE = Place(chat_id=-300, chat_type="group", title="Snap club")
ANN, BOB, CID = Actor(1, "Ann"), Actor(2, "Bob"), Actor(3, "Cid")
SHOWN = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
_update_ids = itertools.count(7000)


def at(ms_after_shown: float) -> Receipt:
    """A press received ``ms_after_shown`` after the board was shown (both clocks agree)."""
    return Receipt(
        stamp_ns=int(ms_after_shown * 1_000_000),
        wall=SHOWN + timedelta(milliseconds=ms_after_shown),
        update_id=next(_update_ids),
    )


def actor_of(player: PlayerView) -> Actor:
    return Actor(player.user_id, player.name)


async def started(sessions: async_sessionmaker[AsyncSession], store: GameStore) -> PlayService:
    lobby = LobbyService(UnitsOfWork(sessions), store, shuffle_seed=3)
    await lobby.open(PLACE, ANN, at(-9000))
    await lobby.join(PLACE, BOB, at(-9000))
    await lobby.join(PLACE, CID, at(-9000))
    await lobby.start(PLACE, ANN, is_admin=known_admin(False), receipt=at(-9000))
    return PlayService(UnitsOfWork(sessions), store)


async def board_with_a_match(play: PlayService) -> TableView:
    """Flip in turn (an hour before the test's board) until a Snap! is correct."""
    for _ in range(60):
        table = (await play.table(PLACE)).table
        ranks = [p.top.rank for p in table.players if p.top]
        if len(ranks) != len(set(ranks)):
            return table
        turn = table.turn_player
        assert turn is not None
        await play.flip(PLACE, actor_of(turn), at(-3_600_000))
    pytest.fail("no match in 60 flips")


async def stored_reaction_times(sessions: async_sessionmaker[AsyncSession]) -> list[int | None]:
    async with sessions() as session:
        rows = await session.scalars(
            select(GameOperation.reaction_ms)
            .where(GameOperation.kind == "snap_called")
            .order_by(GameOperation.seq)
        )
        return list(rows)


async def test_a_refused_press_leaves_the_reaction_clock_as_it_was(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    store = GameStore(shared=False)
    play = await started(session_factory, store)
    table = await board_with_a_match(play)
    await board_sent(session_factory, PLACE, table.game_id, table.board_version, 50, at(0))
    cached = store.cached(table.game_id)
    turn = table.turn_player
    assert turn is not None
    other = next(p for p in table.players if p.seat != turn.seat)
    with pytest.raises(Refused) as refused:
        await play.flip(PLACE, actor_of(other), at(100), table.board_version)
    assert refused.value.reason is Reason.NOT_YOUR_TURN
    assert store.cached(table.game_id) is cached  # nothing was dropped or changed
    assert (await play.table(PLACE)).table == table
    called = await play.call(PLACE, BOB, CallKind.SNAP, at(300), table.board_version)
    assert called.verdict is CallVerdict.PENDING
    assert called.reaction_ms == 300
    assert await stored_reaction_times(session_factory) == [300]


@pytest.mark.parametrize("worker", ["restarted", "second worker"])
async def test_reaction_times_hold_after_a_restart_and_on_another_worker(
    session_factory: async_sessionmaker[AsyncSession], worker: str
) -> None:
    first = GameStore(shared=True)
    play = await started(session_factory, first)
    table = await board_with_a_match(play)
    await board_sent(session_factory, PLACE, table.game_id, table.board_version, 50, at(0))
    if worker == "restarted":
        del play, first
    other = PlayService(UnitsOfWork(session_factory), GameStore(shared=True))
    called = await other.call(PLACE, CID, CallKind.SNAP, at(300), table.board_version)
    assert called.reaction_ms == 300
    assert await stored_reaction_times(session_factory) == [300]


async def test_a_board_shown_again_keeps_its_first_showing(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    play = await started(session_factory, GameStore())
    table = await board_with_a_match(play)
    await board_sent(session_factory, PLACE, table.game_id, table.board_version, 50, at(0))
    # Posted again after a restart, a minute later: calls are still timed from the first.
    await board_sent(session_factory, PLACE, table.game_id, table.board_version, 51, at(60_000))
    called = await play.call(PLACE, ANN, CallKind.SNAP, at(450), table.board_version)
    assert called.reaction_ms == 450


async def test_a_call_on_a_board_never_shown_has_no_reaction_time(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    play = await started(session_factory, GameStore())
    table = await board_with_a_match(play)
    called = await play.call(PLACE, ANN, CallKind.SNAP, at(450), table.board_version)
    assert called.verdict is CallVerdict.PENDING
    assert called.reaction_ms is None


class _ActThenRefuse(Service):
    """A change that moves the engine (and maybe saves it), then is refused."""

    async def run(self, *, save: bool) -> None:
        async with self._change(PLACE, at(0)) as uow:
            row = await self._running_game(uow, PLACE)
            loaded = await self._store.load(uow, row)
            before = len(loaded.game.history)
            loaded.game.flip(loaded.game.turn)
            if save:
                operations = tuple(loaded.game.history[before:])
                await self._store.save(uow, row, loaded, operations, actor=ANN, receipt=None)
            raise Refused(Reason.BAD_BUTTON)


@pytest.mark.parametrize("save", [False, True], ids=["moved", "moved-and-saved"])
async def test_a_refusal_after_the_engine_moved_leaves_no_half_changed_game(
    session_factory: async_sessionmaker[AsyncSession], save: bool
) -> None:
    store = GameStore(shared=False)
    play = await started(session_factory, store)
    before = (await play.table(PLACE)).table
    with pytest.raises(Refused):
        await _ActThenRefuse(UnitsOfWork(session_factory), store).run(save=save)
    assert (await play.table(PLACE)).table == before
    turn = before.turn_player
    assert turn is not None
    flipped = await play.flip(PLACE, actor_of(turn), at(10))
    assert flipped.table.flips == before.flips + 1


async def test_ten_snap_presses_on_a_board_with_no_match_cost_one_card(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    play = await started(session_factory, GameStore())
    table = (await play.table(PLACE)).table
    assert not table.players[1].top  # nothing face up yet: no call is correct
    bob_cards = table.players[1].face_down
    first = await play.call(PLACE, BOB, CallKind.SNAP, at(0), table.board_version)
    assert first.verdict is CallVerdict.WRONG
    for press in range(1, 10):
        with pytest.raises(Refused) as repeat:
            await play.call(PLACE, BOB, CallKind.SNAP, at(press * 10), table.board_version)
        assert repeat.value.reason is Reason.REPEATED_PRESS
    after = (await play.table(PLACE)).table
    assert after.players[1].face_down == bob_cards - 1
    assert len(await stored_reaction_times(session_factory)) == 1


async def test_the_game_cache_keeps_the_most_recently_used_games_and_reloads_the_others(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    store = GameStore(shared=False, capacity=2)
    lobby = LobbyService(UnitsOfWork(session_factory), store, shuffle_seed=5)
    play = PlayService(UnitsOfWork(session_factory), store)
    places = [Place(chat_id=-310 - index, chat_type="group") for index in range(3)]
    for place in places:
        await lobby.open(place, ANN, at(0))
        await lobby.join(place, BOB, at(0))
        await lobby.start(place, ANN, is_admin=known_admin(False), receipt=at(0))
    assert len(store) == 2
    first = (await play.table(places[0])).table  # rebuilt from its history
    assert store.cached(first.game_id) is not None
    assert len(store) == 2
    turn = first.turn_player
    assert turn is not None
    flipped = await play.flip(places[0], actor_of(turn), at(10))
    assert flipped.table.flips == 1
    with pytest.raises(ValueError, match="at least one"):
        GameStore(capacity=0)


async def first_board_flipped(
    sessions: async_sessionmaker[AsyncSession],
) -> tuple[PlayService, TableView, TableView, PlayerView]:
    """A game whose first board was shown and flipped from: the two tables, and who flipped."""
    play = await started(sessions, GameStore())
    first = (await play.table(PLACE)).table
    await board_sent(sessions, PLACE, first.game_id, first.board_version, 50, at(0))
    turn = first.turn_player
    assert turn is not None
    second = (await play.flip(PLACE, actor_of(turn), at(1_000), first.board_version)).table
    return play, first, second, turn


async def test_flip_on_the_newest_board_in_the_chat_acts_and_on_a_replaced_one_is_refused(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    play, first, second, _ = await first_board_flipped(session_factory)
    following = second.turn_player
    assert following is not None
    # The second board waits for the flood limit: the first is the newest in the chat.
    third = (await play.flip(PLACE, actor_of(following), at(1_200), first.board_version)).table
    assert third.flips == 2
    await board_sent(session_factory, PLACE, third.game_id, third.board_version, 51, at(1_300))
    after = third.turn_player
    assert after is not None
    with pytest.raises(Refused) as old:
        await play.flip(PLACE, actor_of(after), at(1_400), first.board_version)
    assert old.value.reason is Reason.OLD_BOARD
    assert (await play.table(PLACE)).table == third


def _engine_errors(base: type[SnapError]) -> list[type[SnapError]]:
    found = []
    for sub in base.__subclasses__():
        found += [sub, *_engine_errors(sub)]
    return found


@pytest.mark.parametrize("error", _engine_errors(SnapError), ids=lambda error: error.__name__)
def test_each_engine_error_is_answered_with_its_own_reason(error: type[SnapError]) -> None:
    refused = refusal_for(error("what went wrong"))
    if error.reason is None:  # bad input: the player reads what was wrong
        assert refused.reason is Reason.BAD_BUTTON
        assert refused.details == {"detail": "what went wrong"}
    else:
        assert refused.reason.value == error.reason


async def test_a_call_is_timed_on_the_receipts_clock_when_the_boards_clock_runs_ahead(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """The sandbox's Skip ahead moves the clock boards are shown by, not the receipts': a call
    300 ms after its board is timed at 300 ms, not at 0 (every reaction was 0 ms after a skip)."""
    skipped = timedelta(minutes=5)
    store = GameStore(shared=False)
    await started(session_factory, store)
    wall_time_of = lambda moment: moment - skipped  # noqa: E731
    play = PlayService(UnitsOfWork(session_factory), store, wall_time_of)
    table = await board_with_a_match(play)
    shown = at(0)  # on the boards' clock, five minutes ahead
    shown_ahead = Receipt(shown.stamp_ns, shown.wall + skipped)
    await board_sent(session_factory, PLACE, table.game_id, table.board_version, 50, shown_ahead)
    called = await play.call(PLACE, BOB, CallKind.SNAP, at(300), table.board_version)
    assert called.reaction_ms == 300
