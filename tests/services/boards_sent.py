"""A board reaching Telegram, as the bot records it: the outbox marks the board sent."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.services.types import Place, Receipt
from telesnap.storage.repositories import ShownBoard
from telesnap.storage.uow import UnitsOfWork


async def board_sent(
    sessions: async_sessionmaker[AsyncSession],
    place: Place,
    game_id: int,
    version: int,
    message_id: int,
    shown: Receipt,
) -> None:
    """The outbox marks board ``version`` sent as ``message_id`` at ``shown.wall``.

    Its transaction records the board view that reaction times start from
    (``OutboxService.sent``), the one path the bot takes.
    """
    outbox = OutboxService(UnitsOfWork(sessions))
    board = ShownBoard(game_id, version, message_id, shown.wall)
    await outbox.sent(Shown(place.chat_id, (), message_id, board=board))
