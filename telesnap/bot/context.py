"""Reading who, where and when from an update, and answering refusals."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from telegram import Bot, Message, Update, User
from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError

from ..services.types import Actor, Place, Reason, Refused

T = TypeVar("T")


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
    """Whether the user is the chat's creator or an administrator."""
    try:
        member = await bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)


async def as_manager(
    bot: Bot, place: Place, actor: Actor, action: Callable[[bool], Awaitable[T]]
) -> T:
    """Run an action reserved to the game's creator or admins.

    It is tried as a plain player first; only when that is refused is the
    user's admin status asked of Telegram, so creators cost no extra call.
    """
    try:
        return await action(False)
    except Refused as refused:
        if refused.reason not in (Reason.NOT_CREATOR, Reason.NOT_ADMIN):
            raise
        if not await is_chat_admin(bot, place.chat_id, actor.user_id):
            raise
    return await action(True)


def command_arguments(message: Message) -> list[str]:
    """The words after the command."""
    text = message.text or ""
    return text.split()[1:]


Handler = Callable[[Update, Any], Awaitable[None]]
