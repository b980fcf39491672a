"""Which updates the bot keeps: the kinds it asks Telegram for, and the messages meant for it.

Of the messages only commands for this bot (or no bot in particular) are stored; an edited
message is not, since a command counts once, when it is sent.

>>> wanted({"update_id": 1, "message": {"text": "/snap"}}, "snapbot")
True
>>> wanted({"update_id": 2, "message": {"text": "hello all"}}, "snapbot")
False
>>> wanted({"update_id": 3, "edited_message": {"text": "/snap"}}, "snapbot")
False
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ALLOWED_UPDATES", "bot_username", "wanted"]

ALLOWED_UPDATES = ("message", "callback_query", "my_chat_member")
"""The update kinds the bot has handlers for."""


def wanted(payload: Mapping[str, Any], username: str | None) -> bool:
    """Whether the bot keeps this update (``payload`` as Telegram sent it).

    ``username`` is the bot's own (without ``@``); None keeps every command.
    """
    if "callback_query" in payload or "my_chat_member" in payload:
        return True
    message = payload.get("message")
    if not isinstance(message, Mapping):
        return False
    text = message.get("text")
    if not isinstance(text, str) or not text.startswith("/"):
        return False
    first_word = text.split(maxsplit=1)[0] if text.strip() else text
    _, at, target = first_word.partition("@")
    return not at or username is None or target.lower() == username.lower()


def bot_username(bot: object) -> str | None:
    """The bot's username, or None while it is not known (before ``getMe``)."""
    try:
        username = getattr(bot, "username", None)
    except RuntimeError:  # python-telegram-bot's Bot before initialize()
        return None
    return username if isinstance(username, str) else None
