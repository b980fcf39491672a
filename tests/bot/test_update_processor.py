"""The update processor: a busy topic waits in its own line, without holding every slot.

These tests go through python-telegram-bot's own ``process_update`` (the seam:
it takes a slot of its semaphore before calling our ``do_process_update``).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from telegram import Chat, Message, Update

from telesnap.bot.application import ChatOrderedProcessor
from telesnap.bot.callbacks import CallbackSigner
from telesnap.bot.receipts import ReceiptBook

BOOK = ReceiptBook(CallbackSigner.for_token("123:secret"))
SAFETY_S = 10.0
"""Only so that a broken processor fails the test instead of hanging it."""


def message_update(update_id: int, chat_id: int) -> Update:
    chat = Chat(id=chat_id, type=Chat.GROUP)
    message = Message(message_id=update_id, date=datetime.now(UTC), chat=chat, text="/flip")
    return Update(update_id=update_id, message=message)


async def test_updates_queued_behind_a_busy_topic_do_not_stall_another_chat() -> None:
    processor = ChatOrderedProcessor(BOOK, max_concurrent_updates=2)
    busy_release = asyncio.Event()
    busy_started = asyncio.Event()
    other_done = asyncio.Event()
    order: list[int] = []

    async def busy(update_id: int) -> None:
        busy_started.set()
        order.append(update_id)
        await busy_release.wait()

    async def other() -> None:
        other_done.set()

    tasks = [asyncio.create_task(processor.process_update(message_update(1, -5), busy(1)))]
    await busy_started.wait()
    # Four more updates for the busy chat: before, they took every slot while waiting.
    tasks += [
        asyncio.create_task(processor.process_update(message_update(n, -5), busy(n)))
        for n in range(2, 6)
    ]
    tasks.append(asyncio.create_task(processor.process_update(message_update(9, -6), other())))
    async with asyncio.timeout(SAFETY_S):
        await other_done.wait()
    assert order == [1], "the busy chat's later updates still wait for its first"
    busy_release.set()
    async with asyncio.timeout(SAFETY_S):
        await asyncio.gather(*tasks)
    assert order == [1, 2, 3, 4, 5], "one chat's updates in arrival order"


async def test_no_more_updates_run_at_once_than_there_are_slots() -> None:
    processor = ChatOrderedProcessor(BOOK, max_concurrent_updates=2)
    release = asyncio.Event()
    running = 0
    most = 0
    two_running = asyncio.Event()

    async def handle() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        if running == 2:
            two_running.set()
        await release.wait()
        running -= 1

    tasks = [
        asyncio.create_task(processor.process_update(message_update(n, -100 - n), handle()))
        for n in range(6)
    ]
    async with asyncio.timeout(SAFETY_S):
        await two_running.wait()
    for _ in range(10):
        await asyncio.sleep(0)  # give the other four every chance to start
    assert running == 2
    release.set()
    async with asyncio.timeout(SAFETY_S):
        await asyncio.gather(*tasks)
    assert most == 2
    assert processor.slot_count == 2
