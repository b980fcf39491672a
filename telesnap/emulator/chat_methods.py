"""The emulated methods about the bot, updates, webhooks, commands, chats and members."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from yarl import URL

from .errors import bad_request
from .guard import is_loopback_host
from .updates import Webhook
from .world import Chat, User, member_json

if TYPE_CHECKING:
    from .core import Emulator

COMMAND_NAME = re.compile(r"^[a-z0-9_]{1,32}$")
ACCEPTED_GIFT_TYPES = {
    "unlimited_gifts": False,
    "limited_gifts": False,
    "unique_gifts": False,
    "premium_subscription": False,
    "gifts_from_channels": False,
}


async def get_me(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getMe: the bot's own user, with its bot-only fields."""
    return {
        **emulator.bot.to_json(),
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
    }


async def get_updates(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getUpdates: long polling (409 Conflict while a webhook is set)."""
    return await emulator.updates.get_updates(
        params.get("offset"), params.get("limit", 100), params.get("timeout", 0)
    )


async def set_webhook(emulator: Emulator, params: dict[str, Any]) -> Any:
    """setWebhook: an http(s) URL to POST updates to; an empty URL removes the webhook.

    A refused webhook changes nothing: ``drop_pending_updates`` drops only once it is set.
    """
    url = params["url"]
    webhook = _checked_webhook(emulator, params) if url else None
    if params.get("drop_pending_updates"):
        emulator.updates.drop_pending()
    await emulator.updates.set_webhook(webhook)
    return True


def _checked_webhook(emulator: Emulator, params: dict[str, Any]) -> Webhook:
    url = params["url"]
    if not re.match(r"^https?://", url):
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    host = URL(url).host or ""
    if not emulator.config.public_webhooks and not is_loopback_host(host):
        raise bad_request(
            f"bad webhook: the emulator delivers updates only to this machine "
            f"(localhost, 127.0.0.1 or ::1), not to {host or 'an empty host'}"
        )
    secret = params.get("secret_token")
    if secret is not None and not re.match(r"^[A-Za-z0-9_-]{1,256}$", secret):
        raise bad_request("bad webhook: secret token contains unallowed characters")
    return Webhook(url, secret, params.get("max_connections", 40))


async def delete_webhook(emulator: Emulator, params: dict[str, Any]) -> Any:
    """deleteWebhook: back to getUpdates; ``drop_pending_updates`` forgets the queue."""
    if params.get("drop_pending_updates"):
        emulator.updates.drop_pending()
    await emulator.updates.set_webhook(None)
    return True


async def get_webhook_info(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getWebhookInfo: the URL, pending count and the last delivery error."""
    webhook = emulator.updates.webhook
    info: dict[str, Any] = {
        "url": webhook.url if webhook else "",
        "has_custom_certificate": False,
        "pending_update_count": len(emulator.updates.pending),
    }
    if webhook is not None:
        info["max_connections"] = webhook.max_connections
        if webhook.last_error_date is not None:
            info["last_error_date"] = webhook.last_error_date
            info["last_error_message"] = webhook.last_error_message
    return info


def _command_key(emulator: Emulator, params: dict[str, Any]) -> tuple[str, str]:
    scope = params.get("scope") or {"type": "default"}
    if "chat_id" in scope:
        emulator.world.chat(scope["chat_id"])
    return json.dumps(scope, sort_keys=True), params.get("language_code", "")


async def set_my_commands(emulator: Emulator, params: dict[str, Any]) -> Any:
    """setMyCommands: per scope and language; names are 1-32 of a-z, 0-9 and _."""
    commands = params["commands"]
    if len(commands) > 100:
        raise bad_request("too many commands")
    for command in commands:
        if not COMMAND_NAME.match(str(command.get("command", ""))):
            raise bad_request("BOT_COMMAND_INVALID")
        if not 1 <= len(str(command.get("description", ""))) <= 256:
            raise bad_request("command description must be 1-256 characters long")
    emulator.commands[_command_key(emulator, params)] = [
        {"command": command["command"], "description": command["description"]}
        for command in commands
    ]
    return True


async def get_my_commands(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getMyCommands: the commands of exactly this scope and language."""
    return emulator.commands.get(_command_key(emulator, params), [])


async def delete_my_commands(emulator: Emulator, params: dict[str, Any]) -> Any:
    """deleteMyCommands: forget the commands of this scope and language."""
    emulator.commands.pop(_command_key(emulator, params), None)
    return True


def commands_for(emulator: Emulator, chat: Chat, user: User) -> list[dict[str, Any]]:
    """The command menu ``user``'s client shows in ``chat``, as Telegram picks it.

    The narrowest scope that has commands wins; in each scope the user's
    language first, then the commands set without a language.
    """
    admin = chat.role_of(user.id) in {"creator", "administrator"}
    scopes: list[dict[str, Any]] = []
    if chat.type == "private":
        scopes += [{"type": "chat", "chat_id": chat.id}, {"type": "all_private_chats"}]
    else:
        scopes.append({"type": "chat_member", "chat_id": chat.id, "user_id": user.id})
        if admin:
            scopes.append({"type": "chat_administrators", "chat_id": chat.id})
        scopes.append({"type": "chat", "chat_id": chat.id})
        if admin:
            scopes.append({"type": "all_chat_administrators"})
        scopes.append({"type": "all_group_chats"})
    scopes.append({"type": "default"})
    for scope in scopes:
        key = json.dumps(scope, sort_keys=True)
        for language in (user.language_code or "", ""):
            if (key, language) in emulator.commands:
                return emulator.commands[(key, language)]
    return []


def _readable_chat(emulator: Emulator, chat_id: int | str) -> Chat:
    return emulator.world.writable_chat(chat_id)


async def get_chat(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getChat: the ChatFullInfo of a chat the bot is in."""
    chat = _readable_chat(emulator, params["chat_id"])
    return {
        **chat.to_json(),
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": ACCEPTED_GIFT_TYPES,
    }


async def get_chat_member(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getChatMember: a user's status in a chat (``left`` if never a member)."""
    chat = _readable_chat(emulator, params["chat_id"])
    return member_json(chat, emulator.world.user(params["user_id"]))


async def get_chat_administrators(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getChatAdministrators: the creator and administrators, the bot included if one."""
    chat = _readable_chat(emulator, params["chat_id"])
    if chat.type == "private":
        raise bad_request("there are no administrators in the private chat")
    return [
        member_json(chat, emulator.world.user(user_id))
        for user_id, role in chat.roles.items()
        if role in {"creator", "administrator"}
    ]


async def get_chat_member_count(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getChatMemberCount: members, administrators and the creator."""
    chat = _readable_chat(emulator, params["chat_id"])
    return sum(role in {"creator", "administrator", "member"} for role in chat.roles.values())
