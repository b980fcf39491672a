"""The table of emulated methods, and the plausible answer for every other one."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from . import chat_methods, message_methods
from .errors import ApiError
from .spec import Method

if TYPE_CHECKING:
    from .core import Emulator

Handler = Callable[["Emulator", dict[str, Any]], Awaitable[Any]]

HANDLERS: dict[str, Handler] = {
    "getme": chat_methods.get_me,
    "getupdates": chat_methods.get_updates,
    "setwebhook": chat_methods.set_webhook,
    "deletewebhook": chat_methods.delete_webhook,
    "getwebhookinfo": chat_methods.get_webhook_info,
    "setmycommands": chat_methods.set_my_commands,
    "getmycommands": chat_methods.get_my_commands,
    "deletemycommands": chat_methods.delete_my_commands,
    "getchat": chat_methods.get_chat,
    "getchatmember": chat_methods.get_chat_member,
    "getchatadministrators": chat_methods.get_chat_administrators,
    "getchatmembercount": chat_methods.get_chat_member_count,
    "sendmessage": message_methods.send_message,
    "editmessagetext": message_methods.edit_message_text,
    "editmessagereplymarkup": message_methods.edit_message_reply_markup,
    "editmessagemedia": message_methods.edit_message_media,
    "deletemessage": message_methods.delete_message,
    "answercallbackquery": message_methods.answer_callback_query,
    "sendphoto": message_methods.send_photo,
    "sendanimation": message_methods.send_animation,
    "senddocument": message_methods.send_document,
    "sendchataction": message_methods.send_chat_action,
    "getfile": message_methods.get_file,
    "pinchatmessage": message_methods.pin_chat_message,
    "unpinchatmessage": message_methods.unpin_chat_message,
}


def not_emulated_result(emulator: Emulator, method: Method, params: dict[str, Any]) -> Any:
    """Answer a method the emulator does not emulate: true, or a minimal object.

    The chat, if named, must still exist and let the bot in.
    """
    if isinstance(params.get("chat_id"), int):
        chat = emulator.world.writable_chat(params["chat_id"])
    else:
        chat = None
    returns = method.returns[0] if method.returns else "Boolean"
    if returns == "Boolean":
        return True
    if returns == "Integer":
        return 0
    if returns == "String":
        return ""
    if returns.startswith("Array of"):
        return []
    if returns == "Message" and chat is not None:
        return {
            "message_id": chat.next_message_id(),
            "from": emulator.bot.to_json(),
            "chat": chat.to_json(),
            "date": int(time.time()),
        }
    if returns == "MessageId" and chat is not None:
        return {"message_id": chat.next_message_id()}
    if returns in {"Message", "MessageId"}:
        raise ApiError(400, "Bad Request: chat not found")
    return {}
