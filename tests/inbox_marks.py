"""Whether the inbox holds an update as processed: what the tests read, the bot never asks."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from telesnap.storage.models import InboxUpdate


async def is_processed(database: AsyncEngine | AsyncSession, update_id: int) -> bool:
    """Whether ``update_id`` is stored and marked processed (read on ``database``)."""
    statement = select(InboxUpdate.processed_at).where(InboxUpdate.update_id == update_id)
    if isinstance(database, AsyncSession):
        return await database.scalar(statement) is not None
    async with database.connect() as connection:
        return await connection.scalar(statement) is not None
