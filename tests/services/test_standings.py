"""The final standings an ended game shows: places, cards, snaps, wrong calls, fastest call."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, CallVerdict, EndReason, LeaveReason, SeatStatus
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.races import RaceService
from telesnap.services.play.store import GameStore
from telesnap.storage.uow import UnitsOfWork

from ..admin import known_admin
from .boards_sent import board_sent
from .test_play_flow import ANN, BOB, CID, PLACE, flip_until_match, receipt, started_game


async def test_the_fastest_correct_call_survives_a_restart_and_wrong_calls_are_counted(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    version = await flip_until_match(play)
    table = (await play.table(PLACE)).table
    await board_sent(session_factory, PLACE, table.game_id, version, 77, receipt(1_000))
    first = await play.call(PLACE, BOB, CallKind.SNAP, receipt(1_000 + 412), seen_version=version)
    assert first.verdict is CallVerdict.PENDING
    assert first.reaction_ms == 412
    late = await play.call(PLACE, CID, CallKind.SNAP, receipt(1_000 + 950), seen_version=version)
    assert late.reaction_ms == 950
    assert first.race_id is not None
    await RaceService(UnitsOfWork(session_factory), play._store).decide(PLACE, first.race_id)
    wrong = await play.call(PLACE, ANN, CallKind.SNAP, receipt(9_000))
    assert wrong.verdict is CallVerdict.WRONG

    # A restart: a new store rebuilds the game from the stored history.
    store = GameStore()
    await LobbyService(UnitsOfWork(session_factory), store).leave(PLACE, CID, receipt())
    ended = await LobbyService(UnitsOfWork(session_factory), store).end(
        PLACE, ANN, is_admin=known_admin(True), receipt=receipt()
    )
    assert ended is not None
    final = ended.table.final
    assert final is not None
    assert final.reason is EndReason.ABANDONED
    assert final.fastest is not None
    assert (final.fastest.name, final.fastest.reaction_ms) == ("Bob", 412)
    rows = {row.name: row for row in final.rows}
    assert rows["Bob"].snaps_won == 1
    assert rows["Ann"].wrong_calls == 1
    assert rows["Cid"].left_reason is LeaveReason.LEFT
    assert rows["Cid"].cards == 0
    assert [row.name for row in final.rows][-1] == "Cid"  # walking away ranks last
    assert sum(row.cards for row in final.rows) + ended.table.pot_size == 52
    assert all(row.status is SeatStatus.ACTIVE for row in final.rows if row.name != "Cid")


async def test_a_running_game_has_no_standings(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    _, play = await started_game(session_factory)
    assert (await play.table(PLACE)).table.final is None


async def test_a_game_without_timed_calls_has_no_fastest_call(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby, play = await started_game(session_factory)
    await play.call(PLACE, ANN, CallKind.SNAP, receipt())
    ended = await lobby.end(PLACE, ANN, is_admin=known_admin(True), receipt=receipt())
    assert ended is not None
    assert ended.table.final is not None
    assert ended.table.final.fastest is None
