"""The boards shown, as the outbox records them when it marks a board sent, and read back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.board_views import ShownBoards
from telesnap.services.types import Place, Receipt
from telesnap.storage.models import BoardView
from telesnap.storage.uow import UnitOfWork

from .boards_sent import board_sent

SHOWN = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
PLACE = Place(chat_id=-600, chat_type="group")


async def a_game(sessions: async_sessionmaker[AsyncSession]) -> int:
    async with UnitOfWork(sessions) as uow:
        await uow.users.upsert(1, "Ann")
        await uow.chats.upsert(PLACE.chat_id, "group")
        return (await uow.games.add(PLACE.chat_id, 0, creator_id=1)).id


def at(seconds: float) -> Receipt:
    return Receipt(0, SHOWN + timedelta(seconds=seconds))


async def stored(sessions: async_sessionmaker[AsyncSession]) -> list[tuple[int, int]]:
    async with sessions() as session:
        rows = await session.execute(
            select(BoardView.version, BoardView.message_id).order_by(BoardView.version)
        )
        return [(row.version, row.message_id) for row in rows]


async def test_a_board_marked_sent_is_shown_from_that_moment(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    for version in (1, 2, 3):
        await board_sent(session_factory, PLACE, game_id, version, 100 + version, at(version))
    assert await stored(session_factory) == [(1, 101), (2, 102), (3, 103)]
    shown = ShownBoards()
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await shown.newest_version(uow, game_id) == 3
        assert await shown.shown_at(uow, game_id, 2) == SHOWN + timedelta(seconds=2)
        assert await shown.shown_at(uow, game_id, 9) is None


async def test_a_version_shown_again_keeps_its_first_moment_in_its_newer_message(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    await board_sent(session_factory, PLACE, game_id, 4, 104, at(0))
    # Posted again after a restart, a minute later: the first showing still counts, and
    # the new message is the one with live buttons (the next board takes them off).
    await board_sent(session_factory, PLACE, game_id, 4, 204, at(60))
    assert await stored(session_factory) == [(4, 204)]
    # A late mark of the older message changes nothing.
    await board_sent(session_factory, PLACE, game_id, 4, 104, at(61))
    assert await stored(session_factory) == [(4, 204)]
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await ShownBoards().shown_at(uow, game_id, 4) == SHOWN


async def test_a_moment_read_once_is_kept_and_not_read_again(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    await board_sent(session_factory, PLACE, game_id, 1, 101, at(0))
    shown = ShownBoards(known_capacity=1)
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await shown.shown_at(uow, game_id, 1) == SHOWN
    async with session_factory() as session, session.begin():
        await session.execute(BoardView.__table__.delete())
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await shown.shown_at(uow, game_id, 1) == SHOWN, "the first showing never changes"
