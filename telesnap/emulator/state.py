"""The emulator's state as the browser page reads it: one snapshot, then only what changed.

Every kind of item has a stable key: users and chats their id, messages
``"<chat_id>:<message_id>"``, toasts their callback query id, calls their
sequence number. :class:`StateFeed` remembers what it has sent (a fingerprint
per item), so each :meth:`StateFeed.changes` holds just the new and changed
items; the page merges them by key. Nothing here knows what the bot is for.
The format is documented in ``docs/sandbox.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from .records import TranscriptMessage
from .world import Chat, User

if TYPE_CHECKING:
    from .core import Emulator
    from .records import Toast

Item = TypeVar("Item")
CALLS_SHOWN = 300
"""How many of the latest Bot API calls a snapshot carries (and every 429 besides)."""
REPLY_PREVIEW_CHARS = 120


def user_json(emulator: Emulator, user: User) -> dict[str, Any]:
    """A user, with their simulated network delay (``null`` when they have none)."""
    link = emulator.network.get(user.id)
    return {
        **user.to_json(),
        "language_code": user.language_code,
        "network": None
        if link is None
        else {"delay_ms": link.delay_ms, "jitter_ms": link.jitter_ms},
    }


def chat_json(chat: Chat) -> dict[str, Any]:
    """A chat with its topics, every member's role and the bot's own role."""
    return {
        "id": chat.id,
        "type": chat.type,
        "title": chat.title,
        "is_forum": chat.is_forum,
        "private_user_id": chat.private_user.id if chat.private_user else None,
        "topics": [
            {"message_thread_id": thread_id, "name": name}
            for thread_id, name in chat.topics.items()
        ],
        "members": {str(user_id): role for user_id, role in chat.roles.items()},
        "bot_role": chat.bot_role,
    }


def message_json(emulator: Emulator, message: TranscriptMessage) -> dict[str, Any]:
    """A message as it is now: text and entities, keyboard, file, what it replies to."""
    replied = emulator.world.replied(message)
    file = message.file
    kept = emulator.files.get(file["file_id"]) if file else None
    return {
        "key": f"{message.chat_id}:{message.message_id}",
        "chat_id": message.chat_id,
        "message_id": message.message_id,
        "message_thread_id": message.message_thread_id,
        "sender_id": message.sender_id,
        "is_from_bot": message.is_from_bot,
        "kind": message.kind,
        "text": message.text,
        "entities": message.entities,
        "reply_markup": message.reply_markup,
        "deleted": message.deleted,
        "pinned": message.pinned,
        "edits": message.edits,
        "date": message.date,
        "reply_to": None
        if replied is None
        else {
            "message_id": replied.message_id,
            "sender_id": replied.sender_id,
            "text": replied.text[:REPLY_PREVIEW_CHARS],
        },
        "file": None
        if file is None
        else {
            "file_id": file["file_id"],
            "file_name": file.get("file_name") or (kept.file_name if kept else None),
            "file_size": file.get("file_size"),
            "content_type": kept.content_type if kept else None,
            "url": f"/_emulator/files/{kept.file_id}" if kept else None,
        },
    }


def toast_json(query: Toast) -> dict[str, Any]:
    """A button press and the bot's answer (``answered`` false while it waits)."""
    return {
        "callback_query_id": query.callback_query_id,
        "chat_id": query.chat_id,
        "message_id": query.message_id,
        "user_id": query.user_id,
        "text": query.text,
        "show_alert": query.show_alert,
        "answered": query.answered_at is not None,
    }


def call_json(emulator: Emulator, sequence: int) -> dict[str, Any]:
    """One Bot API call: method, status (``null`` while running), time taken in ms."""
    call = emulator.calls[sequence]
    took = None if call.answered_at is None else round((call.answered_at - call.received_at) * 1000)
    return {
        "sequence": call.sequence,
        "method": call.method,
        "status": call.status,
        "ms": took,
        "description": call.description,
        "fault": call.fault,
        "wall": call.received_wall,
    }


def _shown_calls(emulator: Emulator) -> list[int]:
    """The latest calls, and every 429 still in the log however old."""
    latest = set(islice(reversed(emulator.calls), CALLS_SHOWN))
    refused = {sequence for sequence in emulator.refusals if sequence in emulator.calls}
    return sorted(latest | refused)


class StateFeed:
    """What one page has been sent, to send it only what changed since."""

    def __init__(self, emulator: Emulator) -> None:
        self._emulator = emulator
        self._sent: dict[str, dict[Hashable, Any]] = {}

    def snapshot(self) -> dict[str, Any]:
        """Everything, as the first message to a page (and for ``GET /_emulator/state``)."""
        self._sent.clear()
        state = self.changes()
        state["type"] = "state"
        return state

    def changes(self) -> dict[str, Any]:
        """The items new or changed since the last snapshot or changes."""
        emulator = self._emulator
        world = emulator.world
        return {
            "type": "changes",
            "version": emulator.changes.version,
            "bot": emulator.bot.to_json(),
            "flood_limits": emulator.flood.limits.enabled,
            "flood_refusals": emulator.refusal_count,
            "users": self._changed(
                "user",
                world.users.values(),
                lambda user: user.id,
                lambda user: user_json(emulator, user),
            ),
            "chats": self._changed("chat", world.chats.values(), lambda chat: chat.id, chat_json),
            "messages": self._changed(
                "message",
                world.messages.values(),
                lambda message: (message.chat_id, message.message_id),
                lambda message: message_json(emulator, message),
                fingerprint=lambda message: (
                    message.edits,
                    message.deleted,
                    message.pinned,
                    message.reply_to_message_id is not None and world.replied(message) is None,
                ),
            ),
            "toasts": self._changed(
                "toast",
                emulator.callback_queries.values(),
                lambda query: query.callback_query_id,
                toast_json,
                fingerprint=lambda query: query.answered_at,
            ),
            "calls": self._changed(
                "call",
                _shown_calls(emulator),
                lambda sequence: sequence,
                lambda sequence: call_json(emulator, sequence),
                fingerprint=lambda sequence: emulator.calls[sequence].answered_at,
            ),
        }

    def _changed(
        self,
        kind: str,
        items: Iterable[Item],
        key: Callable[[Item], Hashable],
        render: Callable[[Item], dict[str, Any]],
        *,
        fingerprint: Callable[[Item], Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Render the items whose fingerprint (by default: their rendering) is new.

        Only the items still there are remembered, so the memory follows the
        emulator's own bounded logs.
        """
        before = self._sent.get(kind, {})
        now: dict[Hashable, Any] = {}
        changed = []
        for item in items:
            item_key = key(item)
            if fingerprint is None:
                rendered = render(item)
                now[item_key] = rendered
                if before.get(item_key) != rendered:
                    changed.append(rendered)
                continue
            mark = fingerprint(item)
            now[item_key] = mark
            if item_key not in before or before[item_key] != mark:
                changed.append(render(item))
        self._sent[kind] = now
        return changed
