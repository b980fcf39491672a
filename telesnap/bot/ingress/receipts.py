"""Receipt stamps: the moment each update entered the bot, taken before it waits.

Telegram's callback queries carry no time, so the only fair clock for a Snap race is ours:
wall-clock nanoseconds with the host's id, so several workers' stamps compare (see the README
on clock discipline), one per ``getUpdates`` batch (equal stamps order by update_id), kept with
the update in the inbox, and kept by an update fetched again after its store failed. A race is
never decided while a call stamped inside its window is on its way; a call that will not be
handled here (another worker took it, or the bot stops) is released. A press's data is decoded
(its HMAC checked) once, where it is stamped or handled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from telegram import Update

from ...services.types import Receipt, Topic
from ...support.bounded import BoundedDict
from ..render.callbacks import Action, ButtonPress, CallbackSigner

_CALL_COMMANDS = ("/snap", "/snappot")

Sender = tuple[int, int]
"""Who sent an update: its chat and its user."""

WAITING_S = 10.0
"""How long a stamped update counts for its sender's updates on their way at most: one
that another worker took is never finished here."""

ARRIVALS_KEPT = 10_000
"""How many stamped updates the book keeps decoded for their handlers at most: one
handled elsewhere (another worker took its topic) is forgotten with the oldest."""


def topic_of(update: Update) -> Topic | None:
    """The chat topic an update belongs to, or None (an update from no chat)."""
    message = update.effective_message
    chat = update.effective_chat
    if chat is None:
        return None
    thread = message.message_thread_id if message and message.is_topic_message else None
    return Topic(chat.id, thread or 0)


@dataclass(frozen=True, slots=True)
class Arrival:
    """An update as it entered the bot: its receipt, its topic, and its press decoded once."""

    receipt: Receipt
    update: Update
    """The update itself, parsed once (the inbox hands it back without parsing it again)."""
    press: ButtonPress | None
    """The authentic press of a callback query, or None (not a press, or not one of ours)."""
    is_call: bool
    """Whether the update is a "Snap!" or "Snap Pot!" call (a press or a command)."""
    topic: Topic | None
    """The chat topic it belongs to (None: no chat)."""


@dataclass
class ReceiptBook:
    """Stamps updates on arrival and keeps the stamps until their handlers ask for them."""

    signer: CallbackSigner
    host_id: str = ""
    """Stored beside every stamp this book takes."""
    _arrivals: BoundedDict[int, Arrival] = field(default_factory=lambda: BoundedDict(ARRIVALS_KEPT))
    _calls_in_flight: dict[int, tuple[Topic, int]] = field(default_factory=dict)
    _waiting: dict[Sender, dict[int, int]] = field(default_factory=dict)
    """Each sender's updates stamped here and not finished: update_id to stamp."""
    _sender_of: BoundedDict[int, Sender] = field(init=False)
    """Whose each waiting update is (the oldest forgotten past :data:`ARRIVALS_KEPT`)."""
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _released: bool = False
    _attempts: dict[int, bool] = field(default_factory=dict)
    """The updates the dispatcher is running now: whether this is their last attempt."""
    _to_retry: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._sender_of = BoundedDict(ARRIVALS_KEPT, on_drop=self._not_waiting)

    def attempting(self, update_id: int, *, last: bool) -> None:
        """The dispatcher runs the update now; ``last``: no retry follows a transient failure."""
        self._attempts[update_id] = last

    def retry_later(self, update_id: int) -> bool:
        """Have a transiently failed update run again; False if this was its last attempt.

        Asked before answering: its next attempt answers it, so nothing is marked processed
        without its change.
        """
        if self._attempts.get(update_id, True):
            return False
        self._to_retry.add(update_id)
        return True

    def take_retry(self, update_id: int) -> bool:
        """Whether the attempt just run asked to be retried (forgotten once asked)."""
        self._attempts.pop(update_id, None)
        asked = update_id in self._to_retry
        self._to_retry.discard(update_id)
        return asked

    def stamp(self, updates: Iterable[Update]) -> list[Arrival]:
        """Stamp a batch of updates that has just entered the bot; return their arrivals.

        One fetched again because its store failed keeps the stamp it first entered with.
        """
        stamp_ns = time.time_ns()
        arrivals = []
        for update in updates:
            arrival = self._arrivals.get(update.update_id) or self._arrive(
                update, Receipt.at(stamp_ns, update.update_id, self.host_id)
            )
            self._arrivals[update.update_id] = arrival
            entered_ns = arrival.receipt.stamp_ns
            if arrival.topic is not None and arrival.is_call:
                self._calls_in_flight[update.update_id] = (arrival.topic, entered_ns)
            if update.effective_user is not None and update.effective_chat is not None:
                sender = (update.effective_chat.id, update.effective_user.id)
                self._waiting.setdefault(sender, {})[update.update_id] = entered_ns
                self._sender_of[update.update_id] = sender
            arrivals.append(arrival)
        return arrivals

    def stamped(self, update_id: int) -> Update | None:
        """The update stamped here with this id, parsed, if the book still has it."""
        arrival = self._arrivals.get(update_id)
        return None if arrival is None else arrival.update

    def admit(self, update: Update, receipt: Receipt) -> Arrival:
        """Ready an update taken from the inbox for its handler, with its stored receipt.

        A press stamped here is not decoded again; one stamped elsewhere or before a restart is.
        """
        arrival = self._arrivals.get(update.update_id)
        if arrival is None or arrival.receipt != receipt:
            arrival = self._arrive(update, receipt)
            self._arrivals[update.update_id] = arrival
        return arrival

    def _arrive(self, update: Update, receipt: Receipt) -> Arrival:
        topic = topic_of(update)
        query = update.callback_query
        if query is not None:
            chat_id = topic.chat_id if topic is not None else None
            press = self.signer.decode(query.data, chat_id=chat_id)
            is_call = press is not None and press.action in (Action.SNAP, Action.SNAP_POT)
            return Arrival(receipt, update, press, is_call, topic)
        message = update.effective_message
        text = message.text if message and message.text else ""
        command = text.split(maxsplit=1)[0].split("@")[0].lower() if text else ""
        return Arrival(receipt, update, None, command in _CALL_COMMANDS, topic)

    def arrival_for(self, update: Update) -> Arrival:
        """The update's arrival, handed to its handler (stamped now if it entered unstamped)."""
        arrival = self._arrivals.pop(update.update_id, None)
        if arrival is None:
            arrival = self._arrive(update, Receipt.now(update.update_id, self.host_id))
        return arrival

    def finished(self, update: Update) -> None:
        """Note that an update's handler is done (its call, if any, is registered)."""
        self._arrivals.pop(update.update_id, None)
        self.handled_elsewhere(update.update_id)

    def waiting_from(self, chat_id: int, user_id: int, update_id: int) -> int:
        """How many of a user's updates in a chat, up to ``update_id``, are not finished.

        Those stamped more than :data:`WAITING_S` ago are not counted (nor kept).
        """
        waiting = self._waiting.get((chat_id, user_id))
        if not waiting:
            return 0
        oldest_ns = time.time_ns() - int(WAITING_S * 1e9)
        for stale in [key for key, stamp_ns in waiting.items() if stamp_ns < oldest_ns]:
            self._forget_sender(stale)
        return sum(1 for key in waiting if key <= update_id)

    def _forget_sender(self, update_id: int) -> None:
        sender = self._sender_of.pop(update_id, None)
        if sender is not None:
            self._not_waiting(update_id, sender)

    def _not_waiting(self, update_id: int, sender: Sender) -> None:
        waiting = self._waiting[sender]
        waiting.pop(update_id, None)
        if not waiting:
            del self._waiting[sender]

    def expect_call(self, update_id: int, topic: Topic, stamp_ns: int) -> None:
        """A call stamped elsewhere (another worker, before a restart) is to be handled here.

        The races of its topic wait for it, as for a call stamped here.
        """
        if not self._released:
            self._calls_in_flight[update_id] = (topic, stamp_ns)

    def handled_elsewhere(self, update_id: int) -> None:
        """An update stamped here is not handled here (another worker took it)."""
        self._forget_sender(update_id)
        if self._calls_in_flight.pop(update_id, None) is not None:
            self._changed.set()

    def calls_on_their_way(self, topic: Topic, user_id: int) -> tuple[int, int]:
        """How many Snap calls of ``topic`` are stamped and not yet handled: all, and the user's."""
        calls = callers = 0
        for update_id, (where, _) in self._calls_in_flight.items():
            if where == topic:
                calls += 1
                sender = self._sender_of.get(update_id)
                callers += sender is not None and sender[1] == user_id
        return calls, callers

    def held(self) -> int:
        """How many stamped updates are still waiting for their handlers to finish."""
        return len(self._arrivals) + len(self._calls_in_flight)

    def _pending_before(self, topic: Topic, deadline_ns: int) -> bool:
        return any(
            where == topic and stamp <= deadline_ns
            for where, stamp in self._calls_in_flight.values()
        )

    async def wait_for_calls(self, topic: Topic, deadline_ns: int) -> None:
        """Wait until every call for ``topic`` stamped by ``deadline_ns`` has been handled.

        No time limit: a call stamped inside a race's window takes part however long it waits.
        """
        while not self._released and self._pending_before(topic, deadline_ns):
            self._changed.clear()
            await self._changed.wait()

    def release_all(self) -> None:
        """The bot is stopping: the calls not handled yet never will be, so wait for none."""
        self._released = True
        self._calls_in_flight.clear()
        self._waiting.clear()
        self._sender_of.clear()
        self._changed.set()
