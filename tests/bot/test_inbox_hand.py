"""The quick path: what this process stored goes to its dispatcher without being read back.

The database stays the truth: an update that has pending updates before it
which this process does not hold (left by a stop, stored by another worker) is
handled after them; an update stored while another worker holds its topic's
line is handled by that worker, in order, once, and the wake-up that tells it names
the update's topic, so it does not look for pending updates to find it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Chat, Message, Update, User

from telesnap.services.inbox import InboxService
from telesnap.services.types import Topic
from telesnap.storage.database import create_engine

from ..inbox_marks import is_processed
from .inbox_helpers import SAFETY_S, USER, Counter, Worker, message_update, snap_press


async def started(worker: Worker) -> None:
    """Start the worker's dispatcher and wait until its look for leftovers is over."""
    looked = asyncio.Event()
    pending_topics = worker.inbox.pending_topics

    async def watched() -> Any:
        try:
            return await pending_topics()
        finally:
            looked.set()

    worker.inbox.pending_topics = watched  # type: ignore[method-assign]
    await worker.start()
    async with asyncio.timeout(SAFETY_S):
        await looked.wait()


def count_reads(inbox: InboxService) -> list[str]:
    """Record every read of pending updates the dispatcher makes through ``inbox``."""
    reads: list[str] = []

    def counted(name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(inbox, name)

        async def read(*args: Any, **kwargs: Any) -> Any:
            reads.append(name)
            return await method(*args, **kwargs)

        return read

    for name in ("next_in_topic", "pending"):
        setattr(inbox, name, counted(name))
    return reads


def count_sweeps(inbox: InboxService) -> list[str]:
    """Record every look for pending updates (a sweep) made through ``inbox``."""
    sweeps: list[str] = []
    for name in ("pending_calls", "pending_topics"):
        method = getattr(inbox, name)

        async def read(method: Callable[[], Awaitable[Any]] = method, name: str = name) -> Any:
            sweeps.append(name)
            return await method()

        setattr(inbox, name, read)
    return sweeps


async def test_updates_stored_here_are_handled_without_reading_them_back(
    engine: AsyncEngine,
) -> None:
    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    worker = Worker(engine, handle)
    await started(worker)
    reads = count_reads(worker.inbox)
    await worker.receive(message_update(1, -5))
    await worker.receive(message_update(2, -5), snap_press(3, -5), message_update(4, -6))
    await done.reached(4)
    await worker.stop()
    assert worker.application.seen.index(1) < worker.application.seen.index(2)
    assert reads == [], "nothing read back: the rows were in hand"
    for update_id in (1, 2, 3, 4):
        assert await is_processed(worker.engine, update_id)


async def test_an_update_behind_one_stored_elsewhere_waits_for_it(engine: AsyncEngine) -> None:
    if engine.dialect.name == "sqlite":
        pytest.skip("one process on SQLite: no other process stores its updates")
    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    worker = Worker(engine, handle)  # no timed sweep within the test
    await started(worker)
    elsewhere = Worker(engine, handle)  # another process that stored 1, then stopped
    await elsewhere.inbox.store(elsewhere.stamped(message_update(1, -5)))
    await worker.receive(message_update(2, -5))
    await done.reached(2)
    await worker.stop()
    assert worker.application.seen == [1, 2], "the older pending update first"
    assert elsewhere.application.seen == []


async def test_a_redelivered_update_already_handled_is_not_handled_again(
    engine: AsyncEngine,
) -> None:
    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    worker = Worker(engine, handle)
    await worker.start()
    await worker.receive(message_update(1, -5), snap_press(2, -5))
    await done.reached(2)
    await worker.receive(message_update(1, -5), snap_press(2, -5), message_update(3, -5))
    await done.reached(3)
    await worker.stop()
    assert sorted(worker.application.seen) == [1, 2, 3]


@pytest.fixture
async def second_engine(engine: AsyncEngine, migrated_database_url: str) -> AsyncIterator[Any]:
    if migrated_database_url.startswith("sqlite"):
        pytest.skip("several workers share a database on PostgreSQL only")
    other = create_engine(migrated_database_url)
    try:
        yield other
    finally:
        await other.dispose()


async def test_an_update_stored_while_another_worker_holds_the_line_is_handled_there_in_order(
    engine: AsyncEngine, second_engine: AsyncEngine
) -> None:
    first_started = asyncio.Event()
    release = asyncio.Event()
    done = Counter()
    seen: list[tuple[str, int]] = []

    def handler(name: str) -> Callable[[Update], Awaitable[None]]:
        async def handle(update: Update) -> None:
            seen.append((name, update.update_id))
            if update.update_id == 1:
                first_started.set()
                await release.wait()
            done.add()

        return handle

    holding = Worker(engine, handler("holding"))
    storing = Worker(second_engine, handler("storing"))
    await started(holding)
    await storing.start()
    sweeps = count_sweeps(holding.inbox)
    await holding.receive(message_update(1, -5))
    async with asyncio.timeout(SAFETY_S):
        await first_started.wait()
    await storing.receive(message_update(2, -5))  # its line is held by the other worker
    await storing.receive(message_update(3, -5), snap_press(4, -5))
    release.set()
    await done.reached(4)
    await holding.stop()
    await storing.stop()
    assert [update_id for _, update_id in seen if update_id != 4] == [1, 2, 3], "in order, once"
    assert [update_id for _, update_id in seen].count(4) == 1
    assert sweeps == [], "the wake-ups named the updates: no look for pending ones"


async def test_a_users_updates_another_worker_handles_stop_counting_as_on_their_way_here(
    engine: AsyncEngine, second_engine: AsyncEngine
) -> None:
    """The worker that stored them lets them go to the line's holder: the intake gate's count
    of the user's updates on their way drops at once, not ten seconds later (else a quick
    player whose presses a load balancer spreads is turned away as a flood)."""
    release = asyncio.Event()
    done = Counter()

    async def handle(update: Update) -> None:
        if update.update_id == 1:
            await release.wait()
        done.add()

    holding = Worker(engine, handle)
    storing = Worker(second_engine, handle)
    refused = asyncio.Event()
    try_topic = storing.coordination.try_topic

    async def try_topic_seen(topic: Topic) -> bool:
        claimed = await try_topic(topic)
        if not claimed:
            refused.set()
        return claimed

    storing.coordination.try_topic = try_topic_seen  # type: ignore[method-assign]
    await holding.start()
    await storing.start()
    await holding.receive(command_from(USER, 1, -5))
    presses = [command_from(USER, update_id, -5) for update_id in range(2, 6)]
    await storing.receive(*presses)  # their line is held by the other worker
    assert storing.book.waiting_from(-5, USER.id, 5) == 4, "on their way"
    async with asyncio.timeout(SAFETY_S):  # a failure guard: else the test would hang
        while storing.book.waiting_from(-5, USER.id, 5):  # the holder takes them
            await refused.wait()  # a claim of their line refused: look again
            refused.clear()
    release.set()
    await done.reached(5)
    await holding.stop()
    await storing.stop()


def command_from(user: User, update_id: int, chat_id: int) -> Update:
    chat = Chat(id=chat_id, type=Chat.GROUP)
    message = Message(update_id, datetime.now(UTC), chat, from_user=user, text="/flip")
    return Update(update_id=update_id, message=message)
