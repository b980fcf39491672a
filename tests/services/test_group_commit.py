"""Marks that fail: a writer that fails fails its own callers, and a mark that cannot be
stored does not stop the marks after it."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from sqlalchemy import delete, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.inbox import InboxService, StoredUpdate
from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Topic
from telesnap.storage.models import Game as GameRow
from telesnap.storage.models import OutboxMessage
from telesnap.storage.uow import GroupCommit, UnitOfWork, UnitsOfWork

from .test_outbox_rows import boards, durable_game, shown
from .test_play_flow import ANN, PLACE, receipt
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


async def test_a_board_whose_game_was_erased_on_its_way_does_not_stop_the_marks_after_it(
    session_factory: Sessions, caplog: pytest.LogCaptureFixture
) -> None:
    play, outbox, units = await durable_game(session_factory)
    elsewhere = replace(PLACE, chat_id=PLACE.chat_id - 1)
    await LobbyService(units, GameStore(), shuffle_seed=3).open(elsewhere, ANN, receipt())
    await flip(play, PLACE)
    on_its_way = await boards(outbox)
    game_id = on_its_way[0].board.table.game_id
    async with session_factory() as session:  # erased meanwhile, with its chat
        await session.execute(delete(GameRow).where(GameRow.id == game_id))
        await session.commit()
    await outbox.sent(shown(on_its_way, 90))  # its view has no game to go with: not stored
    rows = [e.id for e in (await outbox.line(elsewhere.chat_id)).entries]
    caplog.clear()
    await outbox.sent(Shown(elsewhere.chat_id, tuple(rows), 91))
    assert not [r for r in caplog.records if "could not mark" in r.getMessage()]
    async with session_factory() as session:
        states = await session.scalars(
            select(OutboxMessage.state).where(OutboxMessage.id.in_(rows))
        )
        assert set(states) == {"sent"}, "the other chat's lobby is marked sent"


async def test_a_rider_rides_with_the_next_write_and_one_that_fails_fails_no_writer(
    session_factory: Sessions,
) -> None:
    """A note that rides along (buttons coming off) costs no commit of its own, and when it
    cannot be written the writes it rode with still commit; it rides again with the next."""
    units = UnitsOfWork(session_factory)
    together = GroupCommit(units)
    ran: list[str] = []

    async def note(uow: UnitOfWork) -> None:
        ran.append("note")
        await poisoned(uow)

    async def store(uow: UnitOfWork) -> None:
        ran.append("store")

    together.ride_along(note)
    await together.write(store)  # the shared attempt fails on the note; each alone, once more
    assert ran == ["store", "note", "store", "note"]
    await together.write(store)
    assert ran[4:] == ["store", "note", "store", "note"], "the note rides again with the next"
    batches = together.batches

    async def fixed_note(uow: UnitOfWork) -> None:
        ran.append("fixed note")

    together.ride_along(fixed_note)
    await together.write(store)
    await together.write(store)
    assert ran.count("fixed note") == 1, "a rider that committed (alone here) rides no more"
    assert together.batches == batches + 2, "riders ask for no transaction of their own"
