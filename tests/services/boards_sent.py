"""A board reaching Telegram, as the bot records it: the outbox marks the board sent."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.rows import BOARD
from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.services.types import Place, Receipt
from telesnap.storage.models import OutboxMessage, OutboxState
from telesnap.storage.repositories import ShownBoard
from telesnap.storage.uow import UnitOfWork, UnitsOfWork


async def board_sent(
    sessions: async_sessionmaker[AsyncSession],
    place: Place,
    game_id: int,
    version: int,
    message_id: int,
    shown: Receipt,
) -> None:
    """The outbox marks board ``version`` sent as ``message_id`` at ``shown.wall``.

    The row is the version's pending board row, with the rows before it, as a sender
    shows a run; with none pending (a version shown again), a new row of that version.
    Marking it records the board view reaction times start from (``OutboxService.sent``),
    the one path the bot takes.
    """
    async with UnitOfWork(sessions) as uow:
        pending = await uow.outbox.pending(place.chat_id)
        ids = [row.id for row in pending]
        ours = [r.id for r in pending if (r.game_id, r.board_version) == (game_id, version)]
        if ours:
            ids = ids[: ids.index(ours[-1]) + 1]
        else:
            row = await uow.outbox.add(
                place.chat_id, place.thread_id, BOARD, {}, game_id=game_id, board_version=version
            )
            ids = [row.id]
    outbox = OutboxService(UnitsOfWork(sessions))
    board = ShownBoard(game_id, version, message_id, shown.wall)
    await outbox.sent(Shown(place.chat_id, tuple(ids), message_id, board=board))


async def shown_in(
    uow: UnitOfWork, place: Place, game_id: int, version: int, message_id: int, at: datetime
) -> None:
    """Record in ``uow`` that board ``version`` was shown at ``at``, as a row of its own.

    Written beside the unit's own rows, so that the change's board row stays the one
    its notes go to.
    """
    await uow.session.execute(
        insert(OutboxMessage).values(
            chat_id=place.chat_id,
            thread_id=place.thread_id,
            kind=BOARD,
            payload={},
            game_id=game_id,
            board_version=version,
            state=OutboxState.SENT.value,
            created_at=at,
            done_at=at,
            message_id=message_id,
            shown_at=at,
        )
    )
