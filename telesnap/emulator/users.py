"""What the emulated users do: write messages and commands, press buttons, kick the bot.

Each action turns into an update exactly like Telegram's. Button presses can
be scheduled at offsets from one another; the emulator's own timer enqueues
each one at its moment.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from .checks import find_button
from .core import Emulator
from .formatting import utf16_length
from .records import Toast, TranscriptMessage, UpdateRecord
from .world import ADMIN_RIGHTS, Chat

COMMAND = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?")
_query_ids = itertools.count(4_000_000_000_000_000_001)


@dataclass(frozen=True)
class Press:
    """A press of an inline button, by ``callback_data`` or by button text."""

    chat_id: int
    message_id: int
    user_id: int
    data: str | None = None
    button_text: str | None = None
    offset: float = 0.0
    forged: bool = False
    """A modified client: send ``data`` as it is, whether or not a button carries it."""


def command_entities(text: str) -> list[dict[str, Any]]:
    """Return the ``bot_command`` entities Telegram finds in ``text``.

    >>> command_entities("/snap@telesnap_test_bot now")
    [{'type': 'bot_command', 'offset': 0, 'length': 23}]
    """
    return [
        {
            "type": "bot_command",
            "offset": utf16_length(text[: match.start()]),
            "length": utf16_length(match.group(0)),
        }
        for match in COMMAND.finditer(text)
    ]


def _member_chat(emulator: Emulator, chat_id: int, user_id: int) -> Chat:
    chat = emulator.world.chat(chat_id)
    emulator.world.user(user_id)
    if chat.role_of(user_id) not in {"creator", "administrator", "member"}:
        raise ValueError(f"user {user_id} is not a member of chat {chat_id}")
    return chat


def _delivered_in_privacy_mode(
    emulator: Emulator, chat: Chat, text: str, replied: TranscriptMessage | None
) -> bool:
    """Whether a group bot in privacy mode gets the message, as BotFather's /setprivacy says.

    It gets commands addressed to it (or to no bot in particular), messages that mention
    it by username, and replies to its own messages.
    """
    if chat.type == "private" or chat.bot_role == "administrator":
        return True
    if replied is not None and replied.sender_id == emulator.bot.id:
        return True
    own_name = f"@{emulator.bot.username}".lower()
    for match in COMMAND.finditer(text):
        _, at, addressee = match.group(0).partition("@")
        if not at or f"@{addressee}".lower() == own_name:
            return True
    return re.search(rf"(?<![\w@]){re.escape(own_name)}\b", text, re.IGNORECASE) is not None


def send_text(
    emulator: Emulator,
    chat_id: int,
    user_id: int,
    text: str,
    thread_id: int | None = None,
    reply_to: int | None = None,
) -> tuple[int, UpdateRecord | None]:
    """A user writes ``text``; return its message id and the update (``None`` if withheld).

    ``reply_to`` is the id of a message of the same chat the user replies to.
    As with Telegram's privacy mode, a group bot that is not an administrator
    gets only commands addressed to it (or to no bot in particular), mentions of
    it and replies to its messages. A user
    with a slow network (:attr:`Emulator.network`) gets the message into the
    chat at once, but its update is enqueued only after their delay; the
    update returned is then ``None``.
    """
    chat = _member_chat(emulator, chat_id, user_id)
    if thread_id is not None and thread_id not in chat.topics:
        raise ValueError(f"chat {chat_id} has no topic {thread_id}")
    if chat.bot_role in {"kicked", "left"}:
        raise ValueError(f"the bot is not in chat {chat_id}")
    replied = None
    if reply_to is not None:
        replied = emulator.world.live_message(chat.id, reply_to)
        if replied is None:
            raise ValueError(f"chat {chat_id} has no message {reply_to} to reply to")
    message = emulator.world.add_message(chat, emulator.world.user(user_id), thread_id)
    message.text, message.entities = text, command_entities(text)
    message.reply_to_message_id = replied.message_id if replied else None
    emulator.changes.notify()  # the chat changed, whether or not the bot hears of it
    if not _delivered_in_privacy_mode(emulator, chat, text, replied):
        return message.message_id, None
    payload = emulator.world.telegram_message(message)
    delay = emulator.network_delay(user_id)
    if delay > 0:
        _call_later(emulator, delay, lambda: emulator.updates.enqueue("message", payload, chat.id))
        return message.message_id, None
    return message.message_id, emulator.updates.enqueue("message", payload, chat.id)


def prepare_press(emulator: Emulator, press: Press) -> Toast:
    """Check that ``press`` hits a button of a live bot message; return its query."""
    chat = _member_chat(emulator, press.chat_id, press.user_id)
    message = emulator.world.messages.get((chat.id, press.message_id))
    if message is None or message.deleted or not message.is_from_bot:
        raise ValueError(f"no bot message {press.message_id} in chat {press.chat_id}")
    button = find_button(message.reply_markup, data=press.data, text=press.button_text)
    if press.forged and press.data:
        button = {"callback_data": press.data}
    if button is None or "callback_data" not in button:
        wanted = press.data if press.data is not None else press.button_text
        raise ValueError(f"message {press.message_id} has no callback button {wanted!r}")
    return Toast(
        str(next(_query_ids)),
        chat.id,
        message.message_id,
        press.user_id,
        button["callback_data"],
        pressed_at=emulator.clock(),
    )


def fire_press(emulator: Emulator, query: Toast) -> UpdateRecord:
    """Enqueue the callback_query update of ``query``, carrying the message as it is now."""
    message = emulator.world.messages[(query.chat_id, query.message_id)]
    query.pressed_at = emulator.clock()
    emulator.remember_press(query)
    body = {
        "id": query.callback_query_id,
        "from": emulator.world.user(query.user_id).to_json(),
        "message": emulator.world.telegram_message(message),
        "chat_instance": str(abs(query.chat_id) * 7919 % 10**18),
        "data": query.data,
    }
    return emulator.updates.enqueue("callback_query", body, query.chat_id)


def schedule_presses(emulator: Emulator, presses: list[Press]) -> list[str]:
    """Validate every press, then enqueue each at its ``offset`` seconds from now.

    A user with a slow network (:attr:`Emulator.network`) adds their delay to
    the offset. Returns the callback query ids in the order of ``presses``.
    """
    queries = [prepare_press(emulator, press) for press in presses]
    start = asyncio.get_running_loop().time()
    for press, query in zip(presses, queries, strict=True):
        offset = press.offset + emulator.network_delay(press.user_id)
        if offset <= 0:
            fire_press(emulator, query)
        else:
            _call_at(emulator, start + offset, partial(fire_press, emulator, query))
    return [query.callback_query_id for query in queries]


def _call_later(emulator: Emulator, delay: float, action: Callable[[], object]) -> None:
    _call_at(emulator, asyncio.get_running_loop().time() + delay, action)


def _call_at(emulator: Emulator, when: float, action: Callable[[], object]) -> None:
    """Run ``action`` at loop time ``when``; until then the emulator is not idle."""

    def run() -> None:
        emulator.scheduled.discard(handle)
        action()

    handle = asyncio.get_running_loop().call_at(when, run)
    emulator.scheduled.add(handle)


def kick_bot(emulator: Emulator, chat_id: int) -> UpdateRecord:
    """Remove the bot from a group (or block it in a private chat): it gets 403 from now on."""
    chat = emulator.world.chat(chat_id)
    if chat.bot_role in {"kicked", "left"}:
        raise ValueError(f"the bot is not in chat {chat_id}")
    old_role, chat.bot_role = chat.bot_role, "kicked"
    chat.roles[emulator.bot.id] = "kicked"
    actor_id = next(
        (uid for uid, role in chat.roles.items() if role in {"creator", "administrator"}),
        next((uid for uid in chat.roles if uid != emulator.bot.id), emulator.bot.id),
    )
    bot_json = emulator.bot.to_json()
    body = {
        "chat": chat.to_json(),
        "from": emulator.world.user(actor_id).to_json(),
        "date": int(time.time()),
        "old_chat_member": {"status": old_role, "user": bot_json, **_admin_fields(old_role)},
        "new_chat_member": {"status": "kicked", "user": bot_json, "until_date": 0},
    }
    return emulator.updates.enqueue("my_chat_member", body, chat.id)


def _admin_fields(role: str) -> dict[str, Any]:
    if role != "administrator":
        return {}
    return {**dict.fromkeys(ADMIN_RIGHTS, True), "can_be_edited": False, "is_anonymous": False}
