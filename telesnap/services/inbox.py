"""The durable inbox: received updates stored before they are acknowledged, taken in order.

Telegram is told an update arrived (webhook 200, polling offset) only once its row
commits. A topic's updates are taken one at a time, in update_id order, under its claim;
a Snap call takes its own claim at once, never waiting behind its topic. An update stays
pending until its change commits (marking it) or its handlers are done: a worker that
dies leaves it to a live one, and a committed change applied again is a no-op.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..storage.models import NO_CHAT
from ..storage.repositories import StoredElsewhere, StoredUpdate
from ..storage.uow import GroupCommit, UnitOfWork
from .ports import UnitOfWorkFactory
from .types import Topic

__all__ = ["NO_CHAT", "InboxService", "Intaken", "StoredElsewhere", "StoredUpdate", "trimmed"]

# What of an update the bot reads: everything else (other people's replied-to texts,
# private chats' names, link previews...) is left out before it is stored.
_USER = frozenset({"id", "is_bot", "first_name", "last_name", "username", "language_code"})
_CHAT = frozenset({"id", "type", "title", "is_forum"})
_ENTITY = frozenset({"type", "offset", "length"})
_REPLIED = frozenset(
    {"message_id", "date", "chat", "from", "sender_chat", "message_thread_id",
     "is_topic_message", "forum_topic_created"}
)  # fmt: skip
_MESSAGE = _REPLIED | {"text", "entities", "reply_to_message", "reply_markup", "photo",
                       "edit_date"}  # fmt: skip
_QUERY = frozenset({"id", "from", "chat_instance", "data", "message", "inline_message_id"})
_MEMBER_UPDATE = frozenset({"chat", "from", "date", "old_chat_member", "new_chat_member"})
_UPDATE = frozenset({"update_id", "message", "edited_message", "callback_query", "my_chat_member"})


def _only(data: Any, keys: frozenset[str]) -> dict[str, Any]:
    return (
        {key: value for key, value in data.items() if key in keys} if isinstance(data, dict) else {}
    )


def _message(data: Any, keys: frozenset[str] = _MESSAGE) -> dict[str, Any]:
    message = _only(data, keys)
    for part in ("from", "sender_chat", "chat"):
        if part in message:
            message[part] = _only(message[part], _USER if part == "from" else _CHAT)
    if "entities" in message:
        message["entities"] = [_only(entity, _ENTITY) for entity in message["entities"]]
    if "reply_to_message" in message:
        message["reply_to_message"] = _message(message["reply_to_message"], _REPLIED)
    return message


def trimmed(payload: dict[str, Any]) -> dict[str, Any]:
    """The fields of an update the bot reads; the rest is not stored.

    >>> trimmed({"update_id": 1, "message": {"message_id": 2, "date": 3, "text": "/join",
    ...     "chat": {"id": 4, "type": "private", "first_name": "Ann"},
    ...     "reply_to_message": {"message_id": 1, "date": 3, "text": "secret",
    ...                          "chat": {"id": 4, "type": "private"}}}})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'update_id': 1, 'message': {'message_id': 2, 'date': 3, 'text': '/join',
     'chat': {'id': 4, 'type': 'private'},
     'reply_to_message': {'message_id': 1, 'date': 3, 'chat': {'id': 4, 'type': 'private'}}}}
    """
    update = _only(payload, _UPDATE)
    for kind in ("message", "edited_message"):
        if kind in update:
            update[kind] = _message(update[kind])
    if "callback_query" in update:
        query = _only(update["callback_query"], _QUERY)
        if "from" in query:
            query["from"] = _only(query["from"], _USER)
        if "message" in query:  # the bot's own message: which one, and its buttons
            query["message"] = _message(query["message"], _REPLIED | {"reply_markup", "photo"})
        update["callback_query"] = query
    if "my_chat_member" in update:
        change = _only(update["my_chat_member"], _MEMBER_UPDATE)
        change["chat"] = _only(change.get("chat"), _CHAT)
        change["from"] = _only(change.get("from"), _USER)
        for side in ("old_chat_member", "new_chat_member"):
            if isinstance(change.get(side), dict):
                member = dict(change[side])
                member["user"] = _only(member.get("user"), _USER)
                change[side] = member
        update["my_chat_member"] = change
    return update


@dataclass(frozen=True, slots=True)
class Intaken:
    """What storing a batch found, for the dispatcher of the process that stored it.

    ``new``: the update_ids stored now (not redeliveries). ``before``: per topic, its pending
    non-call updates older than the batch's, to handle first; None if too many to list.
    """

    new: frozenset[int]
    before: dict[Topic, list[int]] | None


class InboxService:
    """Store received updates, find the pending ones, mark them handled."""

    def __init__(self, units: UnitOfWorkFactory, together: GroupCommit | None = None) -> None:
        """``together``: the group commit updates are stored in, and handled ones emptied in."""
        self._units = units
        self._together = together or GroupCommit(units)

    async def store(
        self, updates: Sequence[StoredUpdate], origin: str = "", *, shared: bool = True
    ) -> Intaken:
        """Store received updates; say which were new and what comes first.

        They commit in the group commit; a redelivered update_id is stored once. ``origin`` names
        this process in other workers' wake-ups. ``shared``: other workers may have stored updates
        of the same topics (else none is looked for).
        """
        updates = [
            dataclasses.replace(stored, payload=trimmed(stored.payload)) for stored in updates
        ]
        found: list[Intaken] = []

        async def write(uow: UnitOfWork) -> None:
            new = frozenset(await uow.updates.store(updates, origin))
            fresh = [stored for stored in updates if stored.update_id in new]
            found[:] = [_intaken(new, await uow.updates.pending_before(fresh) if shared else [])]

        await self._together.write(write)
        return found[0]

    async def pending_topics(self) -> list[Topic]:
        """The topics with pending updates that are not calls."""
        async with self._units(read_only=True) as uow:
            return [Topic(*key) for key in await uow.updates.pending_topics()]

    async def pending_calls(self) -> list[StoredUpdate]:
        """The pending calls, oldest first."""
        async with self._units(read_only=True) as uow:
            return await uow.updates.pending_calls()

    async def next_in_topic(self, topic: Topic, limit: int) -> list[StoredUpdate]:
        """The next (up to ``limit``) pending updates of a topic (not calls), in update_id order."""
        async with self._units(read_only=True) as uow:
            return await uow.updates.next_in_topic(topic.chat_id, topic.thread_id, limit)

    async def pending(self, update_id: int) -> StoredUpdate | None:
        """The update, if it is still pending (read after claiming it)."""
        async with self._units(read_only=True) as uow:
            return await uow.updates.pending(update_id)

    async def handled(self, update_id: int, *, keep_content: bool = False) -> None:
        """Mark an update processed now that its handlers are done; its content goes.

        ``keep_content``: a Snap call, whose race reads it. The content goes in the next group
        commit: until then a kill makes the next start answer the press again (Telegram refuses).
        """
        async with self._units() as uow:
            left = await uow.updates.mark_handled(update_id, keep_content=keep_content)
        if left:  # its change marked it: its content goes now, with the others finished meanwhile
            await self._together.write(_drop_finished)

    async def empty_finished(self) -> None:
        """Drop the content of the updates whose handlers ended (at a stop: any left over).

        Else the next start would take their presses for ones a kill left unanswered.
        """
        async with self._units() as uow:
            await _drop_finished(uow)

    async def take_unfinished_presses(
        self, since: datetime, before: datetime
    ) -> list[tuple[str, int]]:
        """Presses changed from ``since`` to ``before`` whose handlers never ended (listed once).

        Each as (callback query id, receipt stamp): perhaps nobody answered them.
        """
        async with self._units() as uow:
            return await uow.updates.take_unfinished_presses(since, before)


def _intaken(new: frozenset[int], rows: list[tuple[int, int, int]] | None) -> Intaken:
    """``rows``: the pending updates before the new ones, as (update_id, chat_id, thread_id)."""
    if rows is None:
        return Intaken(new, None)
    before: dict[Topic, list[int]] = {}
    for update_id, chat_id, thread_id in rows:
        before.setdefault(Topic(chat_id, thread_id), []).append(update_id)
    return Intaken(new, before)


async def _drop_finished(uow: UnitOfWork) -> None:
    """Drop the content of the updates whose handlers ended since this was last done."""
    await uow.updates.empty_finished()
