"""Reading who and where from an update, and asking Telegram whether a user is an admin."""

from __future__ import annotations

import logging
from functools import partial

from telegram import Bot, Message, Update, User
from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError

from ...services.play.managers import AdminCheck
from ...services.types import Actor, Place, Reason, Refused

logger = logging.getLogger(__name__)


def actor_of(user: User) -> Actor:
    """The acting person, from a Telegram user."""
    return Actor(user.id, user.first_name, user.last_name, user.username, user.language_code)


def place_of_message(message: Message) -> Place:
    """The chat topic a message belongs to."""
    chat = message.chat
    thread = message.message_thread_id if message.is_topic_message else None
    return Place(
        chat_id=chat.id,
        thread_id=thread or 0,
        chat_type=chat.type,
        title=chat.title,
        is_forum=bool(chat.is_forum),
    )


def place_of_update(update: Update) -> Place | None:
    """The chat topic of an update (a command or a press on one of our messages)."""
    query = update.callback_query
    if query is not None:
        message = query.message
        return place_of_message(message) if isinstance(message, Message) else None
    message = update.effective_message
    return place_of_message(message) if message is not None else None


async def is_chat_admin(bot: Bot, chat_id: int, user_id: int) -> bool:
    """Whether the user is the chat's creator or an administrator.

    A private chat is its person's own. When Telegram cannot say, the failure is logged and the
    action refused as such: "only an admin can" would be false.
    """
    if chat_id == user_id:
        return True
    try:
        member = await bot.get_chat_member(chat_id, user_id)
    except TelegramError as error:
        logger.warning(
            "chat %s: cannot tell whether user %s is an admin: %r", chat_id, user_id, error
        )
        raise Refused(Reason.ADMIN_UNKNOWN) from error
    return member.status in (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)


def admin_check(bot: Bot, place: Place, actor: Actor) -> AdminCheck:
    """How a manager's action asks whether ``actor`` is one of the chat's admins.

    Awaited only when the actor is not the game's creator: a creator's action costs no call.
    """
    return partial(is_chat_admin, bot, place.chat_id, actor.user_id)


def replied_to(message: Message) -> Message | None:
    """The message a command answers, if its sender chose one.

    In a forum topic every message replies to the topic's first one; that counts as no reply, so a
    bare /kick or /stats never points at the topic's creator.
    """
    replied = message.reply_to_message
    if replied is None:
        return None
    if replied.forum_topic_created is not None:
        return None
    if message.is_topic_message and replied.message_id == message.message_thread_id:
        return None
    return replied


def command_arguments(message: Message) -> list[str]:
    """The words after the command."""
    text = message.text or ""
    return text.split()[1:]


def command_name(message: Message) -> str:
    """The command a message starts with, as its handler knows it: ``/Stats@SnapBot`` is stats."""
    text = message.text or ""
    return text.split()[0][1:].split("@")[0].lower() if text else ""
