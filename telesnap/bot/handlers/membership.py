"""The bot's own membership of a chat: removed (games end there), or added back."""

from __future__ import annotations

from telegram import Update
from telegram.constants import ChatMemberStatus
from telegram.ext import ContextTypes

from .runtime import finishing, runtime_of

_GONE = (ChatMemberStatus.BANNED, ChatMemberStatus.LEFT)
"""BANNED is Telegram's "kicked"."""


def removes_the_bot(update: Update) -> bool:
    """Whether ``update`` says the bot was removed from its chat (left, or kicked)."""
    change = update.my_chat_member
    return change is not None and change.new_chat_member.status in _GONE


@finishing
async def on_my_chat_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot was removed from a chat (its games there end) or added to one."""
    change = update.my_chat_member
    if change is None:
        return
    runtime = runtime_of(context)
    privacy = runtime.privacy
    if change.new_chat_member.status in _GONE:
        await runtime.removed_from(change.chat.id)
        if privacy is not None:  # the chat is erased once its retention has passed
            await privacy.service.bot_removed(change.chat.id, change.date)
    else:
        runtime.bot_added(change.chat.id)
        if privacy is not None:
            await privacy.service.bot_added(change.chat.id)
