"""The one ordered place: updates come from the inbox, one topic's at a time, calls at once.

These run the real dispatcher and the real inbox (SQLite, and PostgreSQL when
it is configured) behind a stand-in for python-telegram-bot's ``process_update``.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update

from telesnap.services.inbox import StoredUpdate
from telesnap.services.types import Topic

from ..inbox_marks import is_processed
from .inbox_helpers import SAFETY_S, Counter, Worker, message_update, snap_press


async def test_a_busy_topic_waits_in_its_own_line_without_stalling_another_chat(
    engine: AsyncEngine,
) -> None:
    busy_release = asyncio.Event()
    busy_started = asyncio.Event()
    other_done = asyncio.Event()
    order: list[int] = []
    busy_done = Counter()

    async def handle(update: Update) -> None:
        if update.effective_chat and update.effective_chat.id == -6:
            other_done.set()
            return
        busy_started.set()
        order.append(update.update_id)
        await busy_release.wait()
        busy_done.add()

    worker = Worker(engine, handle, slots=2)
    await worker.start()
    await worker.receive(message_update(1, -5))
    async with asyncio.timeout(SAFETY_S):
        await busy_started.wait()
    # Four more updates for the busy chat: in its line, they hold no slot.
    await worker.receive(*(message_update(n, -5) for n in range(2, 6)))
    await worker.receive(message_update(9, -6))
    async with asyncio.timeout(SAFETY_S):
        await other_done.wait()
    assert order == [1], "the busy chat's later updates still wait for its first"
    busy_release.set()
    await busy_done.reached(5)
    await worker.stop()
    assert order == [1, 2, 3, 4, 5], "one chat's updates in update_id order"


async def test_no_more_updates_run_at_once_than_there_are_slots(engine: AsyncEngine) -> None:
    release = asyncio.Event()
    running = 0
    most = 0
    two_running = asyncio.Event()
    done = Counter()

    async def handle(update: Update) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        if running == 2:
            two_running.set()
        await release.wait()
        running -= 1
        done.add()

    worker = Worker(engine, handle, slots=2)
    await worker.start()
    await worker.receive(*(message_update(n, -100 - n) for n in range(6)))
    async with asyncio.timeout(SAFETY_S):
        await two_running.wait()
    for _ in range(20):
        await asyncio.sleep(0)  # give the other four every chance to start
    assert running == 2
    release.set()
    await done.reached(6)
    await worker.stop()
    assert most == 2


async def test_a_call_is_not_held_behind_a_flip_waiting_in_its_topic(engine: AsyncEngine) -> None:
    call_handled = asyncio.Event()
    flip_waits = asyncio.Event()

    async def handle(update: Update) -> None:
        if update.callback_query is not None:
            call_handled.set()
            return
        flip_waits.set()
        await call_handled.wait()  # as a Flip waits for the race its calls decide

    worker = Worker(engine, handle)
    await worker.start()
    await worker.receive(message_update(1, -5))
    async with asyncio.timeout(SAFETY_S):
        await flip_waits.wait()
    await worker.receive(snap_press(2, -5))
    async with asyncio.timeout(SAFETY_S):
        await call_handled.wait()
    await worker.stop()
    assert worker.application.seen == [1, 2]


async def test_a_redelivered_update_is_stored_and_handled_once(engine: AsyncEngine) -> None:
    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    worker = Worker(engine, handle)
    await worker.start()
    await worker.receive(message_update(1, -5))
    await done.reached(1)
    await worker.receive(message_update(1, -5), message_update(2, -5))  # 1 again, with 2
    await done.reached(2)
    await worker.stop()
    assert worker.application.seen == [1, 2]
    assert await is_processed(worker.engine, 1)
    assert await is_processed(worker.engine, 2)


async def test_updates_stored_before_a_stop_are_handled_once_after_the_restart(
    engine: AsyncEngine,
) -> None:
    async def never(update: Update) -> None:
        raise AssertionError("the stopped worker handles nothing")

    stopped = Worker(engine, never)
    # Stored, then the process stops before its dispatcher takes them (as after a kill).
    await stopped.inbox.store(
        stopped.stamped(message_update(1, -5), snap_press(2, -5), message_update(3, -5))
    )
    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    restarted = Worker(engine, handle)
    await restarted.start()
    await done.reached(3)
    await restarted.stop()
    assert sorted(restarted.application.seen) == [1, 2, 3]
    again = Worker(engine, never)
    await again.start()  # a second restart finds nothing pending
    await again.stop()


async def test_an_update_keeps_the_stamp_taken_when_it_was_received(engine: AsyncEngine) -> None:
    stamps: list[int] = []
    done = Counter()

    async def handle(update: Update) -> None:
        stamps.append(worker.book.arrival_for(update).receipt.stamp_ns)
        done.add()

    worker = Worker(engine, handle)
    (stored,) = worker.stamped(message_update(1, -5))
    await worker.inbox.store([stored])
    await worker.start()
    await done.reached(1)
    await worker.stop()
    assert stamps == [stored.stamp_ns]


async def test_a_drain_finishes_the_update_in_hand_and_leaves_the_rest_for_the_next_worker(
    engine: AsyncEngine,
) -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def hold_the_first(update: Update) -> None:
        if update.update_id == 1:
            started.set()
            await release.wait()

    stopping = Worker(engine, hold_the_first)
    await stopping.start()
    await stopping.receive(message_update(1, -5), message_update(2, -5))
    async with asyncio.timeout(SAFETY_S):
        await started.wait()
    drain = asyncio.create_task(stopping.dispatcher.drain())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not drain.done(), "the drain waits for the update in hand"
    await stopping.receive(message_update(3, -6))  # arrives during the drain: stored, not taken
    release.set()
    async with asyncio.timeout(SAFETY_S):
        await drain
    assert stopping.application.seen == [1]
    assert await is_processed(stopping.engine, 1)
    await stopping.coordination.close()

    done = Counter()

    async def handle(update: Update) -> None:
        done.add()

    successor = Worker(engine, handle)
    await successor.start()
    await done.reached(2)
    await successor.stop()
    assert sorted(successor.application.seen) == [2, 3], "nothing lost, nothing twice"


async def test_a_call_whose_dispatch_fails_no_longer_holds_its_topics_races(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    async def handle(update: Update) -> None:
        raise AssertionError("the call's claim failed: it is not handled now")

    worker = Worker(engine, handle)
    failed = asyncio.Event()

    async def try_call(update_id: int) -> bool:
        failed.set()
        raise ConnectionError("database unreachable")

    worker.coordination.try_call = try_call  # type: ignore[method-assign]
    await worker.start()
    press = snap_press(2, -5)
    with caplog.at_level(logging.ERROR, logger="telesnap.bot.ingress.dispatcher"):
        await worker.receive(press)
        async with asyncio.timeout(SAFETY_S):
            await failed.wait()
            # A race of the topic waits for the calls on their way: this one is not any more
            # (the sweep takes it again from the inbox, and it counts again then).
            await worker.book.wait_for_calls(Topic(-5, 0), time.time_ns())
    assert "call update 2 stopped" in caplog.text
    await worker.stop()


async def test_looking_for_pending_updates_in_an_outage_logs_its_traceback_once(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep looks again at every wake-up: an outage is a line each time, one traceback."""
    worker = Worker(engine, lambda update: asyncio.sleep(0))
    await worker.start()
    looked = Counter()
    real = worker.inbox.pending_calls

    async def away() -> list[StoredUpdate]:
        looked.add()
        if looked.count <= 3:
            raise ConnectionResetError("the database went away")
        return await real()

    monkeypatch.setattr(worker.inbox, "pending_calls", away)
    with caplog.at_level(logging.INFO, logger="telesnap.bot.ingress.dispatcher"):
        for n in range(1, 5):
            worker.dispatcher.wake(None)
            await looked.reached(n)
        await worker.stop()
    failed = [r for r in caplog.records if "could not look" in r.getMessage()]
    assert [r.exc_info is not None for r in failed] == [True, False, False]
    assert "(ConnectionResetError: the database went away)" in failed[-1].getMessage()
    assert any("works again, after 3 failures" in r.getMessage() for r in caplog.records)
