"""The buttons a stop left on: a board's removal waits for the chat's next slot in memory,
so a kill (or a drain that ran out of time) can leave the board before the newest live."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Place
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .boards_sent import shown_in
from .test_play_flow import ANN, BOB, receipt

LAST = datetime(2026, 12, 4, 21, 0, tzinfo=UTC)


async def game_in(sessions: async_sessionmaker[AsyncSession], place: Place) -> int:
    lobby = LobbyService(UnitsOfWork(sessions), GameStore(), shuffle_seed=3)
    await lobby.open(place, ANN, receipt())
    await lobby.join(place, BOB, receipt())
    started = await lobby.start(place, ANN, is_admin=known_admin(False), receipt=receipt())
    return started.lobby.game_id


async def test_the_board_before_each_recent_games_newest_is_named_for_its_buttons_to_go(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    busy, quiet, live = Place(-1, title="busy"), Place(-2, title="quiet"), Place(-3, title="live")
    games = {place: await game_in(session_factory, place) for place in (busy, quiet, live)}
    async with UnitOfWork(session_factory) as uow:
        for version, message_id in enumerate((10, 11, 12)):  # 12 shown last, just before the stop
            await shown_in(
                uow, busy, games[busy], version, message_id, LAST - timedelta(seconds=4 - version)
            )
        for version, message_id in enumerate((20, 21)):  # its last board an hour before the stop
            await shown_in(
                uow,
                quiet,
                games[quiet],
                version,
                message_id,
                LAST - timedelta(hours=1, seconds=-version),
            )
        for version in range(3):  # the live style: one message edited in place
            await shown_in(
                uow, live, games[live], version, 30, LAST - timedelta(seconds=3 - version)
            )
    async with UnitOfWork(session_factory) as uow:
        await uow.outbox.mark_bared([(busy.chat_id, 10)])  # noted when 11 replaced it
    outbox = OutboxService(UnitsOfWork(session_factory))
    left = await outbox.boards_a_stop_may_have_left_live()
    assert left == [(busy.chat_id, 11)], "12 keeps its buttons; 11's removal is not noted"
    await outbox.bared(busy.chat_id, 11)  # noted before they come off
    assert await outbox.boards_a_stop_may_have_left_live() == [], "taking them off twice is refused"
    await outbox.not_bared(busy.chat_id, 11)  # the removal failed: it waits to be tried again
    left = await outbox.boards_a_stop_may_have_left_live()
    assert left == [(busy.chat_id, 11)], "a kill while it waits leaves it to the start"
