"""Receipt stamps: the moment each update entered the process, taken before it waits.

Telegram's callback queries carry no time, so the only fair clock for a Snap
race is ours. Updates are stamped where they enter: when ``getUpdates``
returns (one stamp per batch; equal stamps are ordered by update_id) or when
the webhook request arrives. The book also tracks "call" updates that are
stamped but not yet handled, so a race is never decided while a call stamped
inside its window is still on its way through the process, however long the
queue: a race is decided on the stamps alone. Every stamped call is released
when its handler finishes (``finished``, which runs for every update whatever
its handlers did), or when the bot stops (``release_all``): a call that will
never be handled then holds no race.

A press's callback data is decoded (and its HMAC checked) once, when it is
stamped: the decoded press travels with the receipt in its :class:`Arrival`,
which the update processor reads to order it and the handler takes to act.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from telegram import Update

from ..services.types import Receipt
from .callbacks import Action, ButtonPress, CallbackSigner

_CALL_COMMANDS = ("/snap", "/snappot")


def topic_key(update: Update) -> tuple[int, int] | None:
    """The (chat id, topic id) an update belongs to, or None."""
    message = update.effective_message
    chat = update.effective_chat
    if chat is None:
        return None
    thread = message.message_thread_id if message and message.is_topic_message else None
    return (chat.id, thread or 0)


@dataclass(frozen=True, slots=True)
class Arrival:
    """An update as it entered the process: its receipt, and its press decoded once."""

    receipt: Receipt
    press: ButtonPress | None
    """The authentic press of a callback query, or None (not a press, or not one of ours)."""
    is_call: bool
    """Whether the update is a "Snap!" or "Snap Pot!" call (a press or a command)."""


@dataclass
class ReceiptBook:
    """Stamps updates on arrival and keeps the stamps until their handlers ask for them."""

    signer: CallbackSigner
    _arrivals: dict[int, Arrival] = field(default_factory=dict)
    _calls_in_flight: dict[int, tuple[tuple[int, int], int]] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _released: bool = False

    def stamp(self, updates: Iterable[Update]) -> None:
        """Stamp a batch of updates that has just entered the process."""
        monotonic_ns = time.monotonic_ns()
        wall = datetime.now(UTC)
        for update in updates:
            arrival = self._arrive(update, monotonic_ns, wall)
            self._arrivals[update.update_id] = arrival
            key = topic_key(update)
            if key is not None and arrival.is_call:
                self._calls_in_flight[update.update_id] = (key, monotonic_ns)

    def _arrive(self, update: Update, monotonic_ns: int, wall: datetime) -> Arrival:
        receipt = Receipt(monotonic_ns, wall, update.update_id)
        query = update.callback_query
        if query is not None:
            press = self.signer.decode(query.data)
            is_call = press is not None and press.action in (Action.SNAP, Action.SNAP_POT)
            return Arrival(receipt, press, is_call)
        message = update.effective_message
        text = message.text if message and message.text else ""
        command = text.split(maxsplit=1)[0].split("@")[0].lower() if text else ""
        return Arrival(receipt, None, command in _CALL_COMMANDS)

    def is_call(self, update: Update) -> bool:
        """Whether the update is a "Snap!" or "Snap Pot!" call (a press or a command)."""
        arrival = self._arrivals.get(update.update_id)
        if arrival is None:
            arrival = self._arrive(update, time.monotonic_ns(), datetime.now(UTC))
        return arrival.is_call

    def arrival_for(self, update: Update) -> Arrival:
        """The update's arrival, handed to its handler (stamped now if it entered unstamped)."""
        arrival = self._arrivals.pop(update.update_id, None)
        if arrival is None:
            arrival = self._arrive(update, time.monotonic_ns(), datetime.now(UTC))
        return arrival

    def finished(self, update: Update) -> None:
        """Note that an update's handler is done (its call, if any, is registered)."""
        self._arrivals.pop(update.update_id, None)
        if self._calls_in_flight.pop(update.update_id, None) is not None:
            self._changed.set()

    def held(self) -> int:
        """How many stamped updates are still waiting for their handlers to finish."""
        return len(self._arrivals) + len(self._calls_in_flight)

    def _pending_before(self, key: tuple[int, int], deadline_ns: int) -> bool:
        return any(
            topic == key and stamp <= deadline_ns for topic, stamp in self._calls_in_flight.values()
        )

    async def wait_for_calls(self, key: tuple[int, int], deadline_ns: int) -> None:
        """Wait until every call for ``key`` stamped by ``deadline_ns`` has been handled.

        There is no time limit: a call stamped inside a race's window takes part in
        it however long its update waits behind others.
        """
        while not self._released and self._pending_before(key, deadline_ns):
            self._changed.clear()
            await self._changed.wait()

    def release_all(self) -> None:
        """The bot is stopping: the calls not handled yet never will be, so wait for none."""
        self._released = True
        self._calls_in_flight.clear()
        self._changed.set()
