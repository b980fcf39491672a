"""The emulated Telegram: users, chats, forum topics and messages, as Telegram's JSON.

>>> world = World(bot=User(1, "Bot", username="b_bot", is_bot=True), clock=lambda: 0.0)
>>> alice = world.add_user("Alice")
>>> chat = world.add_chat("group", title="Snap", member_ids=[alice.id])
>>> chat.role_of(alice.id), chat.role_of(1)
('member', 'member')
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from .config import Clock
from .errors import bad_request, forbidden
from .records import TranscriptMessage

KICKED_MESSAGES = {
    "private": "bot was blocked by the user",
    "group": "bot was kicked from the group chat",
    "supergroup": "bot was kicked from the supergroup chat",
}
TOPIC_CREATED = "forum_topic_created"
"""The kind of a topic's first message: the service message its other messages reply to."""
TOPIC_ICON_COLOR = 0x6FB9F0


@dataclass
class User:
    """A Telegram user (or the bot itself)."""

    id: int
    first_name: str
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None
    is_bot: bool = False

    def to_json(self) -> dict[str, Any]:
        """Return the User object as Telegram sends it."""
        data: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        for name in ("last_name", "username", "language_code"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        return data


@dataclass
class Chat:
    """A private chat, group or supergroup (a forum when ``is_forum``)."""

    id: int
    type: str
    title: str | None = None
    private_user: User | None = None
    is_forum: bool = False
    topics: dict[int, str] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    bot_role: str = "member"
    last_message_id: int = 0

    def to_json(self) -> dict[str, Any]:
        """Return the Chat object as Telegram sends it in messages."""
        data: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.private_user is not None:
            data.update(self.private_user.to_json())
            data["id"], data["type"] = self.id, self.type
            data.pop("is_bot", None)
            data.pop("language_code", None)
        else:
            data["title"] = self.title
        if self.is_forum:
            data["is_forum"] = True
        return data

    def role_of(self, user_id: int) -> str:
        """Return the chat member status of ``user_id`` (``left`` when not a member)."""
        return self.roles.get(user_id, "left")

    def next_message_id(self) -> int:
        """Allocate the chat's next message id."""
        self.last_message_id += 1
        return self.last_message_id


class World:
    """Every user, chat and message of the emulated Telegram."""

    def __init__(self, bot: User, clock: Clock, messages_per_chat: int = 10_000) -> None:
        self.bot = bot
        self.clock = clock
        self.messages_per_chat = messages_per_chat
        """How many of a chat's latest message ids keep their message (topics' first stay)."""
        self.users: dict[int, User] = {bot.id: bot}
        self.chats: dict[int, Chat] = {}
        self.messages: dict[tuple[int, int], TranscriptMessage] = {}
        self._user_ids = itertools.count(1001)
        self._group_ids = itertools.count(1)

    def add_user(
        self,
        first_name: str,
        *,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = "en",
    ) -> User:
        """Create a user with the next free id."""
        user = User(next(self._user_ids), first_name, last_name, username, language_code)
        self.users[user.id] = user
        return user

    def add_chat(
        self,
        chat_type: str,
        *,
        title: str | None = None,
        member_ids: list[int] | tuple[int, ...] = (),
        admin_ids: list[int] | tuple[int, ...] = (),
        is_forum: bool = False,
        bot_is_admin: bool = False,
    ) -> Chat:
        """Create a chat; a private chat is the chat with its only member."""
        if chat_type == "private":
            (user_id,) = member_ids
            chat = Chat(user_id, "private", private_user=self.user(user_id))
            chat.roles = {user_id: "member", self.bot.id: "member"}
        elif chat_type in {"group", "supergroup"}:
            number = next(self._group_ids)
            chat_id = -number if chat_type == "group" else -1_000_000_000_000 - number
            if is_forum and chat_type != "supergroup":
                raise ValueError("only a supergroup can be a forum")
            chat = Chat(chat_id, chat_type, title or f"Chat {number}", is_forum=is_forum)
            for user_id in member_ids:
                self.user(user_id)
                chat.roles[user_id] = "member"
            for user_id in admin_ids:
                self.user(user_id)
                chat.roles[user_id] = "administrator"
            if admin_ids:
                chat.roles[admin_ids[0]] = "creator"
            chat.bot_role = "administrator" if bot_is_admin else "member"
            chat.roles[self.bot.id] = chat.bot_role
        else:
            raise ValueError(f"unknown chat type {chat_type!r}")
        self.chats[chat.id] = chat
        return chat

    def restore_user(self, user: User) -> None:
        """Put back a user saved from an earlier run, keeping its id (new ids follow it)."""
        self.users[user.id] = user
        self._user_ids = itertools.count(max(next(self._user_ids), user.id + 1))

    def restore_chat(self, chat: Chat) -> None:
        """Put back a chat saved from an earlier run (its topics and last message id too)."""
        self.chats[chat.id] = chat
        for thread_id, name in chat.topics.items():
            self._add_topic_created(chat, thread_id, name)
        if chat.type != "private":
            number = -chat.id if chat.type == "group" else -chat.id - 1_000_000_000_000
            self._group_ids = itertools.count(max(next(self._group_ids), number + 1))

    def add_topic(self, chat_id: int, name: str) -> int:
        """Open a forum topic and return its ``message_thread_id``."""
        chat = self.chat(chat_id)
        if not chat.is_forum:
            raise ValueError(f"chat {chat_id} is not a forum")
        thread_id = chat.next_message_id()
        chat.topics[thread_id] = name
        self._add_topic_created(chat, thread_id, name)
        return thread_id

    def _add_topic_created(self, chat: Chat, thread_id: int, name: str) -> None:
        """Store the topic's first message: as in Telegram, its id is the topic's thread id."""
        opener_id = next(
            (
                user_id
                for role in ("creator", "administrator", "member")
                for user_id, user_role in chat.roles.items()
                if user_role == role and user_id != self.bot.id
            ),
            self.bot.id,
        )
        self.messages[(chat.id, thread_id)] = TranscriptMessage(
            chat_id=chat.id,
            message_id=thread_id,
            sender_id=opener_id,
            is_from_bot=opener_id == self.bot.id,
            date=int(time.time()),
            sent_at=self.clock(),
            message_thread_id=thread_id,
            kind=TOPIC_CREATED,
            text=name,
        )

    def user(self, user_id: int) -> User:
        """Return the user ``user_id`` or raise ``Bad Request: user not found``."""
        if user_id not in self.users:
            raise bad_request("user not found")
        return self.users[user_id]

    def chat(self, chat_id: int | str) -> Chat:
        """Return the chat ``chat_id`` or raise ``Bad Request: chat not found``."""
        chat = self.chats.get(chat_id) if isinstance(chat_id, int) else None
        if chat is None:
            raise bad_request("chat not found")
        return chat

    def writable_chat(self, chat_id: int | str, thread_id: int | None = None) -> Chat:
        """Return a chat the bot may post in (in topic ``thread_id`` if given)."""
        chat = self.chat(chat_id)
        if chat.bot_role in {"kicked", "left"}:
            raise forbidden(KICKED_MESSAGES[chat.type])
        if thread_id is not None and thread_id not in chat.topics:
            raise bad_request("message thread not found")
        return chat

    def message(
        self, chat_id: int | str, message_id: int, action: str = "edit"
    ) -> TranscriptMessage:
        """Return a live message or raise ``Bad Request: message to <action> not found``."""
        chat = self.writable_chat(chat_id)
        message = self.live_message(chat.id, message_id)
        if message is None:
            raise bad_request(f"message to {action} not found")
        return message

    def add_message(
        self, chat: Chat, sender: User, thread_id: int | None = None
    ) -> TranscriptMessage:
        """Store a new, empty message in ``chat``; the caller fills its content in.

        The chat's message ``messages_per_chat`` ids older is forgotten, so a chat does not grow.
        """
        message = TranscriptMessage(
            chat_id=chat.id,
            message_id=chat.next_message_id(),
            sender_id=sender.id,
            is_from_bot=sender.is_bot,
            date=int(time.time()),
            sent_at=self.clock(),
            message_thread_id=thread_id,
        )
        self.messages[(chat.id, message.message_id)] = message
        forgotten_id = message.message_id - self.messages_per_chat
        if forgotten_id not in chat.topics:
            self.messages.pop((chat.id, forgotten_id), None)
        return message

    def transcript(self, chat_id: int, *, include_users: bool = False) -> list[TranscriptMessage]:
        """Return the chat's messages in order (only the bot's unless ``include_users``)."""
        return [
            message
            for (message_chat_id, _), message in sorted(self.messages.items())
            if message_chat_id == chat_id and (include_users or message.is_from_bot)
        ]

    def replied(self, message: TranscriptMessage) -> TranscriptMessage | None:
        """The message ``message`` replies to, if it still exists."""
        if message.reply_to_message_id is None:
            return None
        return self.live_message(message.chat_id, message.reply_to_message_id)

    def _shown_reply(self, message: TranscriptMessage) -> TranscriptMessage | None:
        """What Telegram shows ``message`` replying to: its own choice, else its topic's first."""
        replied = self.replied(message)
        thread_id = message.message_thread_id
        if replied is None and thread_id is not None and thread_id != message.message_id:
            return self.live_message(message.chat_id, thread_id)
        return replied

    def live_message(self, chat_id: int, message_id: int) -> TranscriptMessage | None:
        """The message, unless it is deleted or was never kept."""
        message = self.messages.get((chat_id, message_id))
        return None if message is None or message.deleted else message

    def telegram_message(
        self, message: TranscriptMessage, *, with_reply: bool = True
    ) -> dict[str, Any]:
        """Return ``message`` as the Message object Telegram sends.

        A replied-to message is included without its own reply, as Telegram does; in a
        topic, a message that replies to nothing else replies to the topic's first one.
        """
        data: dict[str, Any] = {
            "message_id": message.message_id,
            "from": self.users[message.sender_id].to_json(),
            "chat": self.chats[message.chat_id].to_json(),
            "date": message.date,
        }
        if message.message_thread_id is not None:
            data["message_thread_id"] = message.message_thread_id
            data["is_topic_message"] = True
        if message.kind == TOPIC_CREATED:
            data[TOPIC_CREATED] = {"name": message.text, "icon_color": TOPIC_ICON_COLOR}
            return data
        if message.edit_date is not None:
            data["edit_date"] = message.edit_date
        text_key, entities_key = ("text", "entities")
        if message.kind != "text":
            text_key, entities_key = ("caption", "caption_entities")
            data[message.kind] = _file_json(message)
            if message.kind == "animation":  # Telegram repeats an animation as a document
                data["document"] = dict(message.file or {})
        if message.text or message.kind == "text":
            data[text_key] = message.text
        if message.entities:
            data[entities_key] = message.entities
        if message.reply_markup is not None:
            data["reply_markup"] = message.reply_markup
        replied = self._shown_reply(message) if with_reply else None
        if replied is not None:
            data["reply_to_message"] = self.telegram_message(replied, with_reply=False)
        return data


def _file_json(message: TranscriptMessage) -> Any:
    file = dict(message.file or {})
    if message.kind == "photo":
        return [{**file, "width": 320, "height": 320}]
    if message.kind == "animation":
        return {**file, "width": 640, "height": 320, "duration": 1}
    return file


def member_json(chat: Chat, user: User) -> dict[str, Any]:
    """Return the ChatMember object for ``user`` in ``chat``."""
    status = chat.bot_role if user.is_bot and chat.type != "private" else chat.role_of(user.id)
    data: dict[str, Any] = {"status": status, "user": user.to_json()}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        data.update(dict.fromkeys(ADMIN_RIGHTS, True))
        data["can_be_edited"] = False
        data["is_anonymous"] = False
    elif status == "kicked":
        data["until_date"] = 0
    return data


ADMIN_RIGHTS = (
    "can_manage_chat",
    "can_delete_messages",
    "can_manage_video_chats",
    "can_restrict_members",
    "can_promote_members",
    "can_change_info",
    "can_invite_users",
    "can_post_stories",
    "can_edit_stories",
    "can_delete_stories",
    "can_pin_messages",
    "can_manage_topics",
)
