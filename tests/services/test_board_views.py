"""The boards shown, as the outbox records them when it marks a board's row sent, and read back."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.board_views import ShownBoards
from telesnap.services.outbox.rows import BOARD
from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.services.types import Place, Receipt
from telesnap.storage.models import Game, GameStatus, OutboxMessage
from telesnap.storage.repositories import ShownBoard
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from .boards_sent import board_sent

SHOWN = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
PLACE = Place(chat_id=-600, chat_type="group")


async def a_game(sessions: async_sessionmaker[AsyncSession], thread_id: int = 0) -> int:
    async with UnitOfWork(sessions) as uow:
        await uow.users.upsert(1, "Ann")
        await uow.chats.upsert(PLACE.chat_id, "group")
        return (await uow.games.add(PLACE.chat_id, thread_id, creator_id=1)).id


def at(seconds: float) -> Receipt:
    return Receipt(0, SHOWN + timedelta(seconds=seconds))


async def stored(sessions: async_sessionmaker[AsyncSession]) -> list[tuple[int, int]]:
    """The rows recorded as shown: (board version, message), in the order they were sent."""
    async with sessions() as session:
        rows = await session.execute(
            select(OutboxMessage.board_version, OutboxMessage.message_id)
            .where(OutboxMessage.shown_at.is_not(None))
            .order_by(OutboxMessage.id)
        )
        return [(row.board_version, row.message_id) for row in rows]


async def newest(sessions: async_sessionmaker[AsyncSession], game_id: int) -> tuple[int, int]:
    """The game's board on screen, as a sender reads it: (version, message)."""
    async with UnitOfWork(sessions, read_only=True) as uow:
        board = await uow.outbox.newest_board(game_id)
    assert board is not None
    return board.version, board.message_id


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
    assert await newest(session_factory, game_id) == (4, 204)
    # A late mark of the older message changes nothing.
    await board_sent(session_factory, PLACE, game_id, 4, 104, at(61))
    assert await newest(session_factory, game_id) == (4, 204)
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
        await session.execute(OutboxMessage.__table__.delete())
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await shown.shown_at(uow, game_id, 1) == SHOWN, "the first showing never changes"


async def pending_boards(
    sessions: async_sessionmaker[AsyncSession], game_id: int, versions: range
) -> list[int]:
    """A board row per version, pending, as the game's changes write them."""
    async with UnitOfWork(sessions) as uow:
        rows = [
            await uow.outbox.add(PLACE.chat_id, 0, BOARD, {}, game_id=game_id, board_version=v)
            for v in versions
        ]
    return [row.id for row in rows]


async def test_boards_sent_in_one_message_are_shown_from_its_last_only(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    game_id = await a_game(session_factory)
    ids = await pending_boards(session_factory, game_id, range(1, 4))
    board = ShownBoard(game_id, 3, 70, SHOWN)
    await OutboxService(UnitsOfWork(session_factory)).sent(
        Shown(PLACE.chat_id, tuple(ids), 70, board=board)
    )
    assert await stored(session_factory) == [(3, 70)], "versions 1 and 2 were never on screen"
    assert await newest(session_factory, game_id) == (3, 70)
    async with UnitOfWork(session_factory, read_only=True) as uow:
        assert await ShownBoards().shown_at(uow, game_id, 2) is None


async def test_a_board_of_a_game_erased_on_its_way_does_not_hold_up_the_marks_with_it(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    erased, kept = await a_game(session_factory), await a_game(session_factory, thread_id=1)
    [gone] = await pending_boards(session_factory, erased, range(1, 2))
    [row] = await pending_boards(session_factory, kept, range(1, 2))
    async with session_factory.begin() as session:
        await session.execute(delete(Game).where(Game.id == erased))  # its rows go with it
    outbox = OutboxService(UnitsOfWork(session_factory))
    await asyncio.gather(
        outbox.sent(Shown(PLACE.chat_id, (gone,), 80, board=ShownBoard(erased, 1, 80, SHOWN))),
        outbox.sent(Shown(PLACE.chat_id, (row,), 81, board=ShownBoard(kept, 1, 81, SHOWN))),
    )
    assert await stored(session_factory) == [(1, 81)]


async def test_a_game_still_on_keeps_its_sent_rows_when_old_ones_are_forgotten(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    running, over = await a_game(session_factory), await a_game(session_factory, thread_id=1)
    for game_id in (running, over):
        await board_sent(session_factory, PLACE, game_id, 1, 90 + game_id, at(0))
    async with session_factory.begin() as session:
        await session.execute(
            update(Game).where(Game.id == over).values(status=GameStatus.FINISHED.value)
        )
    later = datetime.now(UTC) + timedelta(days=3)  # the rows were marked sent now
    outbox = OutboxService(UnitsOfWork(session_factory), clock=lambda: later)
    assert await outbox.forget_settled(timedelta(days=2)) == 1, "the finished game's row"
    assert await newest(session_factory, running) == (1, 90 + running)
