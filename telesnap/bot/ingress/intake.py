"""Ingress's last step: stamp updates, pass them through the gate, store them, hand them over.

An update is acknowledged to Telegram only once it is stored (or turned away at
the gate): the inbox, not the process, holds it from then on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from telegram import Update

from ...services.inbox import NO_CHAT, InboxService, StoredUpdate
from ...services.types import Topic
from ...support.bounded import BoundedDict
from ..render.texts import chat_too_busy, cool_down, slow_to_store, too_many_presses
from ..render.toasts import TextOf
from .dispatcher import InboxDispatcher
from .gate import IntakeGate, Verdict
from .receipts import Arrival, ReceiptBook

SLOW_ANSWER_AFTER_S = 5.0
"""How long a press that cannot be stored waits before it is told so (answers go till 12 s)."""
TURNED_AWAY: dict[Verdict, TextOf] = {
    Verdict.ANSWER: too_many_presses,
    Verdict.BUSY: chat_too_busy,
    Verdict.COOL_DOWN: cool_down,
}
"""What a press the gate turned away is told."""
NOT_STORED_KEPT = 4096
"""How many presses that could not be stored are remembered (an outage's)."""


class Intake:
    """Ingress: stamp updates, store them in the inbox, hand them to this process's dispatcher.

    Nothing is acknowledged before :meth:`receive` returns, which is only once they are committed.
    """

    def __init__(
        self,
        book: ReceiptBook,
        inbox: InboxService,
        dispatcher: InboxDispatcher,
        gate: IntakeGate | None = None,
        toast: Callable[[Update, TextOf], None] = lambda update, text_of: None,
        *,
        clock: Callable[[], float] = time.monotonic,
        later: Callable[[float, Callable[[], None]], asyncio.TimerHandle] | None = None,
    ) -> None:
        """``clock`` and ``later`` (``loop.call_later``) let tests move time."""
        self._book = book
        self._inbox = inbox
        self._dispatcher = dispatcher
        self._gate = gate
        self._toast = toast
        """Answers a press here: one the gate turned away, saying why (a dropped message gets
        nothing), or one that could not be stored for a while."""
        self._clock = clock
        self._later = later
        self._not_stored: BoundedDict[int, float | None] = BoundedDict(NOT_STORED_KEPT)
        """Presses not stored yet: when their first try began, or None once told it is slow."""

    async def receive(self, updates: Sequence[Update], payloads: Sequence[dict[str, Any]]) -> None:
        """Stamp and store ``updates`` (``payloads``: each as Telegram sent it).

        An update the gate turns away is acknowledged without being stored.
        """
        arrivals = self._book.stamp(updates)
        stored = []
        for arrival, update, payload in zip(arrivals, updates, payloads, strict=True):
            if self._gate is not None:
                game_id = arrival.press.game_id if arrival.press is not None else None
                verdict = self._gate.verdict(update, arrival.topic, arrival.is_call, game_id)
                if verdict is not Verdict.ADMIT:
                    self._book.finished(update)
                    if verdict is not Verdict.DROP:
                        self._toast(update, TURNED_AWAY[verdict])
                    continue
            stored.append(inbox_entry(arrival, update.update_id, payload))
        if not stored:
            return
        tried = self._clock()
        kept = {entry.update_id for entry in stored}  # not those the gate turned away
        presses = [u for u in updates if u.callback_query is not None and u.update_id in kept]
        timer = self._tell_if_slow(presses, tried)
        try:
            intaken = await self._inbox.store(
                stored, self._dispatcher.origin, shared=self._dispatcher.shared
            )
        except BaseException:
            for entry in stored:
                self._book.handled_elsewhere(entry.update_id)  # not ours: never stored
            self._store_failed(presses)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        for press in presses:
            self._not_stored.pop(press.update_id, None)
        self._dispatcher.offer(stored, intaken)

    def _tell_if_slow(self, presses: Sequence[Update], tried: float) -> asyncio.TimerHandle | None:
        """Answer ``presses`` if their store is still under way when they have waited too long.

        A store may hang (a lock held, a connection that does not answer) long before it fails.
        """
        waiting = [self._not_stored.setdefault(press.update_id, tried) for press in presses]
        since = [first for first in waiting if first is not None]
        if not since:
            return None
        later = self._later or asyncio.get_running_loop().call_later
        return later(
            max(0.0, min(since) + SLOW_ANSWER_AFTER_S - self._clock()),
            lambda: self._store_failed(presses, at_least_s=0.0),
        )

    def _store_failed(
        self, presses: Sequence[Update], at_least_s: float = SLOW_ANSWER_AFTER_S
    ) -> None:
        """Answer the presses that have waited ``at_least_s``: Telegram gives up on them at 15 s.

        Timed from the start of their first try. They still count once stored (their own answer
        is skipped then: one per press).
        """
        now = self._clock()
        for press in presses:
            first = self._not_stored.get(press.update_id)
            if first is not None and now - first >= at_least_s:
                self._not_stored[press.update_id] = None
                self._toast(press, slow_to_store)


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
