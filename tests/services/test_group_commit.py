"""The group commit: a writer that fails fails its own callers, not the others of its batch."""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.inbox import InboxService, StoredUpdate
from telesnap.services.outbox.service import OutboxService
from telesnap.services.types import Topic
from telesnap.storage.uow import GroupCommit, UnitOfWork

from .test_outbox_rows import boards, durable_game, shown
from .test_play_flow import PLACE
from .test_press_cost import flip

Sessions = async_sessionmaker[AsyncSession]


async def poisoned(uow: UnitOfWork) -> None:
    """A write that always fails (as a mark of a game erased meanwhile would)."""
    await uow.session.execute(text("INSERT INTO no_such_table VALUES (1)"))


async def test_updates_and_marks_commit_beside_a_writer_that_fails(
    session_factory: Sessions,
) -> None:
    play, _, units = await durable_game(session_factory)
    together = GroupCommit(units)
    inbox = InboxService(units, together)
    outbox = OutboxService(units, together=together)
    await flip(play, PLACE)
    waiting = await boards(outbox)
    update = StoredUpdate(7101, PLACE.chat_id, 0, False, {"update_id": 7101}, 1, "host")
    intaken, _, failure = await asyncio.gather(
        inbox.store([update]),
        outbox.sent(shown(waiting, 80)),
        together.write(poisoned),
        return_exceptions=True,
    )
    assert isinstance(failure, DBAPIError), "its caller is told"
    assert not isinstance(intaken, BaseException)
    assert intaken.new == {7101}
    assert await inbox.next_in_topic(Topic(PLACE.chat_id, 0), 5) == [update], "stored"
    assert await boards(outbox) == [], "the boards marked sent, by the attempt of their own"
