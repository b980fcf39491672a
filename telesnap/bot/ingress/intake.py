"""Ingress's last step: stamp updates, pass them through the gate, store them, hand them over.

An update is acknowledged to Telegram only once it is stored (or turned away at
the gate): the inbox, not the process, holds it from then on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from telegram import Update

from ...services.inbox import NO_CHAT, InboxService, StoredUpdate
from ...services.types import Topic
from .dispatcher import InboxDispatcher
from .gate import IntakeGate, Verdict
from .receipts import Arrival, ReceiptBook


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
        turned_away: Callable[[Update], None] = lambda update: None,
    ) -> None:
        self._book = book
        self._inbox = inbox
        self._dispatcher = dispatcher
        self._gate = gate
        self._turned_away = turned_away
        """Answers a press the gate turned away (a toast); a dropped message gets nothing."""

    async def receive(self, updates: Sequence[Update], payloads: Sequence[dict[str, Any]]) -> None:
        """Stamp and store ``updates`` (``payloads``: each as Telegram sent it).

        An update the gate turns away is acknowledged without being stored.
        """
        arrivals = self._book.stamp(updates)
        stored = []
        for arrival, update, payload in zip(arrivals, updates, payloads, strict=True):
            if self._gate is not None:
                verdict = self._gate.verdict(update, arrival.topic, arrival.is_call)
                if verdict is not Verdict.ADMIT:
                    self._book.finished(update)
                    if verdict is Verdict.ANSWER:
                        self._turned_away(update)
                    continue
            stored.append(inbox_entry(arrival, update.update_id, payload))
        if not stored:
            return
        try:
            intaken = await self._inbox.store(
                stored, self._dispatcher.origin, shared=self._dispatcher.shared
            )
        except BaseException:
            for entry in stored:
                self._book.handled_elsewhere(entry.update_id)  # not ours: never stored
            raise
        self._dispatcher.offer(stored, intaken)


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
