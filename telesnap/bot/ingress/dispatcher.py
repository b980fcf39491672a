"""The one ordered place: updates taken from the inbox, one topic's at a time, calls at once.

A topic's updates run one at a time, in update_id order, under the topic's claim; waiting ones
hold no slot, so one busy chat never stalls the others. A Snap call runs at once on a claim of
its own: calls are decided by their stamps, and a Flip waiting for its race must not block the
race's calls. The line only orders whole updates: each change runs under the topic's lock in
the services. The inbox is the truth: the sweep every :data:`SWEEP_S` finds what a dead worker
or a missed wake-up left pending.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from telegram import Update
from telegram.ext import Application

from ...coordination import Coordination
from ...services.inbox import InboxService, Intaken, StoredElsewhere, StoredUpdate
from ...services.types import Receipt, Topic
from ...support.bounded import BoundedDict
from ...support.retry import FailureRun, short_cause
from ..render.toasts import last_try_ns
from .receipts import ReceiptBook

logger = logging.getLogger(__name__)

SWEEP_S = 2.0
"""How often pending updates are looked for without a wake-up (a dead worker's, a failed mark)."""
LEFT_TO_STORER_S = 0.05
"""How long an update another worker stored is left to it before this one checks it was taken."""
TOPIC_BATCH = 20
"""How many of a topic's pending updates are read at a time."""
DONE_KEPT = 1024
"""How many handled update_ids are kept (a store that ran beside the mark still lists them)."""
MARK_RETRIES_S = (0.1, 0.5, 2.0)
"""The waits before marking a handled update again after a failure."""
HANDLE_RETRIES_S = (0.2, 0.5, 1.0, 2.0, 4.0)
"""The waits before running an update again whose handlers met a database failure."""


class InboxDispatcher:
    """Takes pending updates from the inbox and has them handled, in each topic's order."""

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        book: ReceiptBook,
        inbox: InboxService,
        coordination: Coordination,
        *,
        max_concurrent_updates: int = 256,
        sweep_s: float = SWEEP_S,
    ) -> None:
        if max_concurrent_updates < 1:
            raise ValueError("max_concurrent_updates must be a positive integer")
        self._application = application
        self._book = book
        self._inbox = inbox
        self._coordination = coordination
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._sweep_s = sweep_s
        self._wake = asyncio.Event()
        self._topics: dict[Topic, asyncio.Task[None]] = {}
        self._hand: dict[Topic, dict[int, StoredUpdate]] = {}
        """Updates stored here, in their topic's order: handled without reading them back."""
        self._unread: set[Topic] = set()
        """Topics whose pending updates are read from the inbox (stored elsewhere, or left over)."""
        self._left_to_line: dict[Topic, list[int]] = {}
        """Updates stored here but not in hand: whoever holds their topic's line handles them."""
        self._in_line: dict[Topic, set[int]] = {}
        """The updates of each topic this process has in hand or is handling now."""
        self._done: BoundedDict[int, None] = BoundedDict(DONE_KEPT)
        """The updates this process handled and marked lately (a store may still see them)."""
        self._calls: dict[int, asyncio.Task[None]] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self._stored_elsewhere: dict[int, Topic] = {}
        """Updates other workers stored, of topics with no line here: checked to be taken."""
        self._check_elsewhere: asyncio.Task[None] | None = None
        self._draining = False

    @property
    def origin(self) -> str:
        """The name of this process in the wake-ups its stores send (``Coordination.origin``)."""
        return self._coordination.origin

    async def start(self) -> None:
        """Take what is pending (left by a stop, say), then keep looking (:meth:`wake`).

        Pending Snap calls run first, so an interrupted race is decided with every call in the
        inbox; pending topics are read next, so no new update overtakes one left pending.
        """
        for call in await self._inbox.pending_calls():
            self._take_call(call)
        await asyncio.gather(*self._calls.values(), return_exceptions=True)
        for topic in await self._inbox.pending_topics():
            self._read_topic(topic)
        self._loop_task = asyncio.create_task(self._run(), name="inbox-dispatcher")

    @property
    def shared(self) -> bool:
        """Whether other workers may store and take updates too (see ``Coordination``)."""
        return self._coordination.shared

    def wake(self, stored: StoredElsewhere | None = None) -> None:
        """Take an update another worker stored; None: look for pending updates now.

        A line running here reads it; else its storer takes it, and it is taken here only if still
        pending a moment later (its line was held here, or the storer died).
        """
        if stored is None:
            self._wake.set()
            return
        if stored.is_call:
            self._take_call(stored)
            return
        topic = Topic(stored.chat_id, stored.thread_id)
        if topic in self._topics:
            self._unread.add(topic)
            return
        self._stored_elsewhere[stored.update_id] = topic
        if self._check_elsewhere is None and not self._draining:
            self._check_elsewhere = asyncio.create_task(self._take_what_is_left_here())

    async def _take_what_is_left_here(self) -> None:
        while self._stored_elsewhere and not self._draining:
            await asyncio.sleep(LEFT_TO_STORER_S)
            stored, self._stored_elsewhere = self._stored_elsewhere, {}
            try:
                pending = await self._coordination.unprocessed(list(stored))
            except Exception:
                logger.exception("could not check %d updates stored elsewhere", len(stored))
                self._wake.set()  # the sweep finds what is left
                continue
            for topic in {stored[update_id] for update_id in pending}:
                self._read_topic(topic)
        self._check_elsewhere = None

    def offer(self, stored: Sequence[StoredUpdate], intaken: Intaken) -> None:
        """Take updates this process has just stored (the quick path, without reading them back).

        One is kept in hand only if every pending update before it in its topic is in this process's
        line; else (and for a redelivery) its topic's line reads the inbox.
        """
        for update in stored:
            new = update.update_id in intaken.new
            if update.is_call:
                self._take_call(update, in_hand=update if new else None)
                continue
            topic = Topic(update.chat_id, update.thread_id)
            if self._draining:
                continue
            line = self._in_line.setdefault(topic, set())
            before = None if intaken.before is None else intaken.before.get(topic, [])
            if (
                new
                and before is not None
                and all(update_id in line or update_id in self._done for update_id in before)
            ):
                self._hand.setdefault(topic, {})[update.update_id] = update
                line.add(update.update_id)
            else:
                self._unread.add(topic)
                if new:
                    self._left_to_line.setdefault(topic, []).append(update.update_id)
            self._take_topic(topic)

    async def _run(self) -> None:
        looking = FailureRun(logger, "looking for pending updates")
        while True:
            with suppress(TimeoutError):  # start() has just looked
                async with asyncio.timeout(self._sweep_s):
                    await self._wake.wait()
            if self._draining:
                return
            self._wake.clear()
            try:
                for call in await self._inbox.pending_calls():
                    self._take_call(call)
                for topic in await self._inbox.pending_topics():
                    self._read_topic(topic)
            except Exception as error:
                looking.failed(
                    error,
                    "could not look for pending updates (%s); looking again soon",
                    short_cause(error),
                )
            else:
                looking.succeeded()

    def _read_topic(self, topic: Topic) -> None:
        """Take a topic whose pending updates are in the inbox, not in hand."""
        self._unread.add(topic)
        self._take_topic(topic)

    def _take_topic(self, topic: Topic) -> None:
        if self._draining or topic in self._topics:
            return  # a running line looks at its hand and the unread mark before it ends
        self._topics[topic] = asyncio.create_task(self._run_topic(topic))

    def _take_call(
        self, call: StoredUpdate | StoredElsewhere, in_hand: StoredUpdate | None = None
    ) -> None:
        """Run a call on its own claim; ``in_hand``: stored here now (not read back)."""
        if self._draining or call.update_id in self._calls:
            return
        # Its topic's races wait for it (it may have been stamped by another worker).
        self._book.expect_call(call.update_id, Topic(call.chat_id, call.thread_id), call.stamp_ns)
        task = self._run_call(call.update_id, in_hand)
        self._calls[call.update_id] = asyncio.create_task(task)

    def _waiting(self, topic: Topic) -> bool:
        return bool(self._hand.get(topic)) or topic in self._unread

    async def _run_topic(self, topic: Topic) -> None:
        try:
            while not self._draining and self._waiting(topic):
                if not await self._coordination.try_topic(topic):
                    # Another worker has the line: what this one stored is its to take (it
                    # was woken by the store), and ours to read back if it comes here. They
                    # are not on their way here any more (the intake gate counts those).
                    left = self._left_to_line.pop(topic, [])
                    for update_id in [*self._drop_hand(topic), *left]:
                        self._book.handled_elsewhere(update_id)
                    self._unread.add(topic)
                    return
                self._left_to_line.pop(topic, None)  # handled here: finished as they are
                try:
                    await self._run_line(topic)
                finally:
                    await self._coordination.release_topic(topic)
        except Exception:
            logger.exception(
                "the line of chat %d topic %d stopped; its updates are taken again soon", *topic
            )
            self._drop_hand(topic)
            self._in_line.pop(topic, None)  # what it held is read back from the inbox
            self._unread.add(topic)
        finally:
            self._topics.pop(topic, None)
            if self._draining or not self._waiting(topic):
                self._in_line.pop(topic, None)
                self._left_to_line.pop(topic, None)

    def _drop_hand(self, topic: Topic) -> list[int]:
        """Let the topic's updates in hand go (read back from the inbox if they come here)."""
        dropped = list(self._hand.pop(topic, {}))
        for update_id in dropped:
            self._in_line.get(topic, set()).discard(update_id)
        return dropped

    async def _run_line(self, topic: Topic) -> None:
        """Handle the topic's pending updates in order, until none is left (claim held)."""
        while not self._draining:
            batch = await self._next_in_line(topic)
            if not batch:
                return
            for stored in batch:
                if self._draining:
                    return
                await self._handle(stored)
                self._in_line.get(topic, set()).discard(stored.update_id)
                self._done[stored.update_id] = None

    async def _next_in_line(self, topic: Topic) -> list[StoredUpdate]:
        """The next updates of a topic whose claim is held: from the inbox, or from the hand."""
        line = self._in_line.setdefault(topic, set())
        if topic in self._unread:
            self._unread.discard(topic)
            batch = await self._inbox.next_in_topic(topic, TOPIC_BATCH)
            if len(batch) == TOPIC_BATCH:
                self._unread.add(topic)  # more after these
            hand = self._hand.get(topic, {})
            for stored in batch:
                hand.pop(stored.update_id, None)
                line.add(stored.update_id)
            return batch
        hand = self._hand.pop(topic, {})
        if not hand:
            return []
        ids = sorted(hand)
        # Another worker, woken by the store, may have taken one before this claim.
        pending = await self._coordination.unprocessed(ids)
        for update_id in ids:
            if update_id not in pending:
                line.discard(update_id)
                self._book.handled_elsewhere(update_id)
        return [hand[update_id] for update_id in ids if update_id in pending]

    async def _run_call(self, update_id: int, in_hand: StoredUpdate | None) -> None:
        try:
            if not await self._coordination.try_call(update_id):
                self._book.handled_elsewhere(update_id)
                return
            try:
                # Read after the claim: fresh (another worker may have handled it).
                if in_hand is None:
                    stored = await self._inbox.pending(update_id)
                else:
                    fresh = await self._coordination.unprocessed([update_id])
                    stored = in_hand if update_id in fresh else None
                if stored is None:
                    self._book.handled_elsewhere(update_id)
                else:
                    await self._handle(stored)
            finally:
                await self._coordination.release_call(update_id)
        except Exception:
            logger.exception("call update %d stopped; it is taken again soon", update_id)
            # Its topic's races stop waiting for it: they would wait for ever if it is
            # never taken again (handled meanwhile); taken again, it counts again.
            self._book.handled_elsewhere(update_id)
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
        topic = Topic(stored.chat_id, stored.thread_id)
        for wait in (*HANDLE_RETRIES_S, None):
            # A press must still be answerable after the wait: else this is its last try.
            last = wait is None or (
                update.callback_query is not None
                and time.time_ns() + int(wait * 1e9) >= last_try_ns(stored.stamp_ns)
            )
            self._book.admit(update, receipt)
            self._book.attempting(stored.update_id, last=last)
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
            if not self._book.take_retry(stored.update_id) or wait is None:
                break
            logger.warning(
                "update %d of chat %d topic %d met a database failure; running it again in %.1f s",
                stored.update_id,
                stored.chat_id,
                stored.thread_id,
                wait,
            )
            if stored.is_call:  # its races still wait for it
                self._book.expect_call(stored.update_id, topic, stored.stamp_ns)
            await asyncio.sleep(wait)
        await self._mark_handled(stored)

    async def _mark_handled(self, stored: StoredUpdate) -> None:
        for wait in (*MARK_RETRIES_S, None):
            try:
                await self._inbox.handled(stored.update_id, keep_content=stored.is_call)
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
        if self._check_elsewhere is not None:
            self._check_elsewhere.cancel()
            await asyncio.gather(self._check_elsewhere, return_exceptions=True)
        if self._loop_task is not None:
            await asyncio.gather(self._loop_task, return_exceptions=True)
        while running := [*self._topics.values(), *self._calls.values()]:
            await asyncio.gather(*running, return_exceptions=True)
        try:
            await self._inbox.empty_finished()
        except Exception:
            logger.exception("could not drop the content of the updates handled last")
