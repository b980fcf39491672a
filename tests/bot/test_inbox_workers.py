"""Two workers (two dispatchers on two engines) on one PostgreSQL database.

They never handle one topic's updates at the same time, handle each update
once, and storing an update wakes the other worker (NOTIFY), not a poll.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update

from telesnap.services.inbox import InboxService
from telesnap.services.types import Topic
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.uow import UnitsOfWork

from .inbox_helpers import Counter, Handle, Worker, message_update, snap_press


@pytest.fixture
async def two_engines(migrated_database_url: str) -> AsyncIterator[tuple[AsyncEngine, AsyncEngine]]:
    if migrated_database_url.startswith("sqlite"):
        pytest.skip("several workers share a database on PostgreSQL only")
    first, second = create_engine(migrated_database_url), create_engine(migrated_database_url)
    try:
        yield first, second
    finally:
        await first.dispose()
        await second.dispose()


TOPICS = (Topic(-11, 0), Topic(-12, 0), Topic(-12, 5))
PER_TOPIC = 8


def update_in(topic: Topic, update_id: int) -> Update:
    update = message_update(update_id, topic.chat_id)
    if topic.thread_id:
        payload = update.to_dict()
        payload["message"]["message_thread_id"] = topic.thread_id
        payload["message"]["is_topic_message"] = True
        update = Update.de_json(payload, None)
    return update


async def test_two_workers_never_handle_one_topic_at_once_and_each_update_once(
    two_engines: tuple[AsyncEngine, AsyncEngine],
) -> None:
    done = Counter()
    busy: set[Topic] = set()
    overlaps: list[int] = []
    handled: dict[int, list[str]] = {}
    order: dict[Topic, list[int]] = {topic: [] for topic in TOPICS}

    def handler(name: str, inbox: InboxService) -> Handle:
        async def handle(update: Update) -> None:
            assert update.effective_chat is not None
            assert update.effective_message is not None
            thread = update.effective_message.message_thread_id or 0
            topic = Topic(update.effective_chat.id, thread)
            handled.setdefault(update.update_id, []).append(name)
            if update.callback_query is None:
                if topic in busy:
                    overlaps.append(update.update_id)
                busy.add(topic)
                order[topic].append(update.update_id)
                await inbox.pending(update.update_id)  # real I/O: the other worker runs
                busy.discard(topic)
            done.add()

        return handle

    first_engine, second_engine = two_engines
    reader = InboxService(UnitsOfWork(session_factory(first_engine)))
    first = Worker(first_engine, handler("first", reader), sweep_s=3600)
    second = Worker(second_engine, handler("second", reader), sweep_s=3600)
    await first.start()
    await second.start()
    update_id = 0
    for _ in range(PER_TOPIC):
        for topic in TOPICS:
            update_id += 1
            worker = first if update_id % 2 else second  # the proxy alternates
            await worker.receive(update_in(topic, update_id))
    calls = [snap_press(update_id + n, TOPICS[0].chat_id) for n in range(1, 4)]
    await second.receive(*calls)
    total = update_id + len(calls)
    await done.reached(total)
    await first.stop()
    await second.stop()

    assert overlaps == [], "one topic's updates never ran at once"
    assert sorted(handled) == list(range(1, total + 1))
    assert all(len(names) == 1 for names in handled.values()), "each update handled once"
    assert {name for names in handled.values() for name in names} == {"first", "second"}
    for topic, ids in order.items():
        assert ids == sorted(ids), f"{topic}'s updates in update_id order"


async def test_storing_an_update_wakes_the_other_worker(
    two_engines: tuple[AsyncEngine, AsyncEngine],
) -> None:
    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    storing_engine, listening_engine = two_engines
    listening = Worker(listening_engine, handle, sweep_s=3600)  # no sweep within the test
    await listening.start()
    storing = Worker(storing_engine, handle)  # its dispatcher never runs: it only stores
    await storing.inbox.store(storing.stamped(message_update(1, -5), snap_press(2, -6)))
    await done.reached(2)
    await listening.stop()
    assert sorted(listening.application.seen) == [1, 2]
