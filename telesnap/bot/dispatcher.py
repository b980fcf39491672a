"""The one ordered place: updates taken from the inbox, one topic's at a time, calls at once.

Ingress (:class:`Intake`) stamps updates, stores them in the inbox and only then
lets the transport acknowledge them; it hands what it stored straight to this
process's :class:`InboxDispatcher`, and on PostgreSQL the NOTIFY of the store
wakes every other worker too. The dispatcher runs each update through
python-telegram-bot's own dispatch (``Application.process_update``: the
handlers and filters), under one of a fixed number of slots:

- a topic's updates run one at a time, in update_id order, in one task that holds
  the topic's claim (whichever worker gets it); updates waiting in a topic's line
  hold no slot, so one busy chat never stalls the others;
- a Snap call runs at once on a claim of its own: calls are decided by their
  stamps, and a Flip waiting for its race must not block the race's calls.

Every change itself runs under the topic's lock in the services (``GameStore.lock``):
that lock is the one per topic; the line here only orders whole updates.
A pending update whose worker died is found again by the sweep every
:data:`SWEEP_S` (its claim went with the worker's connection) or at start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from telegram import Update
from telegram.ext import Application

from ..services.inbox import NO_CHAT, InboxService, StoredUpdate, TopicClaims
from ..services.types import Receipt, Topic
from .receipts import Arrival, ReceiptBook

logger = logging.getLogger(__name__)

SWEEP_S = 2.0
"""How often pending updates are looked for without a wake-up (a dead worker's, a failed mark)."""
TOPIC_BATCH = 20
"""How many of a topic's pending updates are read at a time."""
MARK_RETRIES_S = (0.1, 0.5, 2.0)
"""The waits before marking a handled update again after a failure."""


class InboxDispatcher:
    """Takes pending updates from the inbox and has them handled, in each topic's order."""

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        book: ReceiptBook,
        inbox: InboxService,
        claims: TopicClaims,
        *,
        max_concurrent_updates: int = 256,
        sweep_s: float = SWEEP_S,
    ) -> None:
        if max_concurrent_updates < 1:
            raise ValueError("max_concurrent_updates must be a positive integer")
        self._application = application
        self._book = book
        self._inbox = inbox
        self._claims = claims
        self._slot_count = max_concurrent_updates
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._sweep_s = sweep_s
        self._wake = asyncio.Event()
        self._topics: dict[Topic, asyncio.Task[None]] = {}
        self._again: set[Topic] = set()
        self._calls: dict[int, asyncio.Task[None]] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self._draining = False
        self.handled = 0
        """How many updates this dispatcher has run through the handlers."""

    @property
    def slot_count(self) -> int:
        """How many updates are handled at once, at most."""
        return self._slot_count

    async def start(self) -> None:
        """Listen for other workers' updates and take what is pending (left by a stop, say).

        The pending Snap calls are handled before this returns, so a race that a
        stop interrupted is decided with every call that had reached the inbox.
        """
        await self._claims.start(self.wake)
        for call in await self._inbox.pending_calls():
            self._take_call(call)
        await asyncio.gather(*self._calls.values(), return_exceptions=True)
        self._loop_task = asyncio.create_task(self._run(), name="inbox-dispatcher")

    def wake(self) -> None:
        """Look for pending updates now (another worker stored some)."""
        self._wake.set()

    def offer(self, stored: Sequence[StoredUpdate]) -> None:
        """Take updates this process has just stored (the quick path, without a query)."""
        for update in stored:
            if update.is_call:
                self._take_call(update)
            else:
                self._take_topic(Topic(update.chat_id, update.thread_id))

    async def _run(self) -> None:
        while not self._draining:
            self._wake.clear()
            try:
                for call in await self._inbox.pending_calls():
                    self._take_call(call)
                for topic in await self._inbox.pending_topics():
                    self._take_topic(topic)
            except Exception:
                logger.exception("could not look for pending updates; looking again soon")
            with suppress(TimeoutError):
                async with asyncio.timeout(self._sweep_s):
                    await self._wake.wait()

    def _take_topic(self, topic: Topic) -> None:
        if self._draining:
            return
        if topic in self._topics:
            self._again.add(topic)  # its runner looks again before it lets the topic go
            return
        self._topics[topic] = asyncio.create_task(self._run_topic(topic))

    def _take_call(self, call: StoredUpdate) -> None:
        if self._draining or call.update_id in self._calls:
            return
        # Its topic's races wait for it (it may have been stamped by another worker).
        self._book.expect_call(call.update_id, Topic(call.chat_id, call.thread_id), call.stamp_ns)
        self._calls[call.update_id] = asyncio.create_task(self._run_call(call.update_id))

    async def _run_topic(self, topic: Topic) -> None:
        try:
            while not self._draining:
                if not await self._claims.try_topic(topic):
                    return  # another worker has the line; it looks again before letting go
                try:
                    await self._run_line(topic)
                finally:
                    await self._claims.release_topic(topic)
                if topic not in self._again:
                    return
        except Exception:
            logger.exception(
                "the line of chat %d topic %d stopped; its updates are taken again soon", *topic
            )
        finally:
            self._topics.pop(topic, None)

    async def _run_line(self, topic: Topic) -> None:
        """Handle the topic's pending updates in order, until none is left (claim held)."""
        while not self._draining:
            self._again.discard(topic)
            batch = await self._inbox.next_in_topic(topic, TOPIC_BATCH)
            for stored in batch:
                if self._draining:
                    return
                await self._handle(stored)
            # A short batch was all there was; one stored since flagged the topic again.
            if len(batch) < TOPIC_BATCH and topic not in self._again:
                return

    async def _run_call(self, update_id: int) -> None:
        try:
            if not await self._claims.try_call(update_id):
                self._book.handled_elsewhere(update_id)
                return
            try:
                stored = await self._inbox.pending(update_id)  # read after the claim: fresh
                if stored is None:
                    self._book.handled_elsewhere(update_id)
                else:
                    await self._handle(stored)
            finally:
                await self._claims.release_call(update_id)
        except Exception:
            logger.exception("call update %d stopped; it is taken again soon", update_id)
        finally:
            self._calls.pop(update_id, None)

    async def _handle(self, stored: StoredUpdate) -> None:
        """Run one stored update through the handlers, then mark it processed."""
        try:
            update = self._book.stamped(stored.update_id) or Update.de_json(
                stored.payload, self._application.bot
            )
        except Exception:
            logger.exception("update %d is stored but cannot be read; set aside", stored.update_id)
            await self._mark_handled(stored)
            return
        receipt = Receipt.at(stored.stamp_ns, stored.update_id, stored.host_id)
        self._book.admit(update, receipt)
        async with self._slots:
            try:
                await self._application.process_update(update)
            except Exception:
                # The error handler takes the handlers' failures; this is python-telegram-bot's.
                logger.exception(
                    "update %d of chat %d topic %d failed to dispatch",
                    stored.update_id,
                    stored.chat_id,
                    stored.thread_id,
                )
        self.handled += 1
        await self._mark_handled(stored)

    async def _mark_handled(self, stored: StoredUpdate) -> None:
        for wait in (*MARK_RETRIES_S, None):
            try:
                await self._inbox.handled(stored.update_id)
                return
            except Exception:
                if wait is None:
                    raise
                logger.exception(
                    "could not mark update %d of chat %d handled; trying again in %.1f s",
                    stored.update_id,
                    stored.chat_id,
                    wait,
                )
                await asyncio.sleep(wait)

    async def drain(self) -> None:
        """Take nothing more; finish the updates in hand; release every claim."""
        self._draining = True
        self._wake.set()
        # Calls stored but not started here are handled by another worker (or after a
        # restart): no race waits for them here.
        self._book.release_all()
        if self._loop_task is not None:
            await asyncio.gather(self._loop_task, return_exceptions=True)
        while running := [*self._topics.values(), *self._calls.values()]:
            await asyncio.gather(*running, return_exceptions=True)
        await self._claims.close()


class Intake:
    """Ingress: stamp updates, store them in the inbox, hand them to this process's dispatcher.

    :meth:`receive` returns only once the updates are committed: the transport
    acknowledges them to Telegram after that (the webhook's 200, the offset of
    the next ``getUpdates``). If storing fails it raises, and nothing is acknowledged.
    """

    def __init__(self, book: ReceiptBook, inbox: InboxService, dispatcher: InboxDispatcher) -> None:
        self._book = book
        self._inbox = inbox
        self._dispatcher = dispatcher

    async def receive(self, updates: Sequence[Update], payloads: Sequence[dict[str, Any]]) -> None:
        """Stamp and store ``updates`` (``payloads``: each as Telegram sent it)."""
        arrivals = self._book.stamp(updates)
        stored = [
            inbox_entry(arrival, update.update_id, payload)
            for arrival, update, payload in zip(arrivals, updates, payloads, strict=True)
        ]
        try:
            await self._inbox.store(stored)
        except BaseException:
            for update in updates:
                self._book.handled_elsewhere(update.update_id)  # not ours: never stored
            raise
        self._dispatcher.offer(stored)


def inbox_entry(arrival: Arrival, update_id: int, payload: dict[str, Any]) -> StoredUpdate:
    """What the inbox stores of an update that has just arrived (``payload``: as sent)."""
    topic = arrival.topic or Topic(NO_CHAT, 0)
    return StoredUpdate(
        update_id=update_id,
        chat_id=topic.chat_id,
        thread_id=topic.thread_id,
        is_call=arrival.is_call,
        payload=payload,
        stamp_ns=arrival.receipt.stamp_ns,
        host_id=arrival.receipt.host_id,
    )
