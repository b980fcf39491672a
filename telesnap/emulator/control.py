"""The control API under ``/_emulator/``: tests act as users and read what happened.

Every endpoint takes and returns JSON. Mistakes in a test's request (an unknown
chat, a button that is not there) answer 400 with ``{"error": "..."}``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web

from .chat_methods import commands_for
from .core import Emulator
from .errors import ApiError
from .network import NetworkDelay
from .records import Fault, to_json
from .users import Press, kick_bot, schedule_presses, send_text

EMULATOR_KEY = web.AppKey("emulator", Emulator)
Endpoint = Callable[[Emulator, dict[str, Any]], Awaitable[Any]]
Target = TypeVar("Target")
BAD_REQUEST_ERRORS: tuple[type[Exception], ...] = (ValueError, KeyError, TypeError, ApiError)
"""What a control endpoint answers with 400 and the error's text (bad input, not a fault)."""


def json_endpoint(
    key: web.AppKey[Target], action: Callable[[Target, dict[str, Any]], Awaitable[Any]]
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An aiohttp handler for ``action``: its input is the query, the JSON body and the path.

    ``action`` gets the application's ``key`` object and that input; what it
    returns is answered as JSON, and a bad input as 400 with the error's text.
    The sandbox's interface uses it too.
    """

    async def handle(request: web.Request) -> web.Response:
        body: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            body.update(await request.json())
        body.update(request.match_info)
        try:
            result = await action(request.app[key], body)
        except BAD_REQUEST_ERRORS as error:
            return web.json_response({"error": str(error)}, status=400)
        return web.json_response(result)

    return handle


async def _bot(emulator: Emulator, body: dict[str, Any]) -> Any:
    return {"token": emulator.config.token, "user": emulator.bot.to_json()}


async def _create_user(emulator: Emulator, body: dict[str, Any]) -> Any:
    user = emulator.world.add_user(
        body["first_name"],
        last_name=body.get("last_name"),
        username=body.get("username"),
        language_code=body.get("language_code", "en"),
    )
    emulator.changes.notify()
    return user.to_json()


async def _update_user(emulator: Emulator, body: dict[str, Any]) -> Any:
    user = emulator.world.user(int(body["user_id"]))
    if user.is_bot:
        raise ValueError("the bot cannot be changed")
    if "first_name" in body:
        first_name = str(body["first_name"]).strip()
        if not 1 <= len(first_name) <= 64:
            raise ValueError("first_name must be 1-64 characters")
        user.first_name = first_name
    if "last_name" in body:
        user.last_name = str(body["last_name"]).strip()[:64] or None
    if "language_code" in body:
        user.language_code = str(body["language_code"] or "").strip()[:8] or None
    emulator.changes.notify()
    return user.to_json()


async def _set_network(emulator: Emulator, body: dict[str, Any]) -> Any:
    user = emulator.world.user(int(body["user_id"]))
    link = NetworkDelay(float(body.get("delay_ms", 0)), float(body.get("jitter_ms", 0)))
    if link.delay_ms == 0:
        emulator.network.pop(user.id, None)
    else:
        emulator.network[user.id] = link
    emulator.changes.notify()
    return {"delay_ms": link.delay_ms, "jitter_ms": link.jitter_ms}


async def _set_member(emulator: Emulator, body: dict[str, Any]) -> Any:
    chat = emulator.world.chat(int(body["chat_id"]))
    user = emulator.world.user(int(body["user_id"]))
    role = body.get("role", "member")
    if chat.type == "private" or user.is_bot:
        raise ValueError("roles can be set only for people in groups")
    if role not in {"member", "administrator", "left"}:
        raise ValueError("role must be member, administrator or left")
    if chat.role_of(user.id) == "creator":
        raise ValueError("the creator's role cannot change")
    if role == "left":
        chat.roles.pop(user.id, None)
    else:
        chat.roles[user.id] = role
    emulator.changes.notify()
    return {"status": chat.role_of(user.id)}


async def _set_flood(emulator: Emulator, body: dict[str, Any]) -> Any:
    enabled = body["enabled"]
    if not isinstance(enabled, bool):
        raise ValueError("enabled must be true or false")
    emulator.flood.limits = dataclasses.replace(emulator.flood.limits, enabled=enabled)
    emulator.changes.notify()
    return {"enabled": enabled}


async def _commands(emulator: Emulator, body: dict[str, Any]) -> Any:
    chat = emulator.world.chat(int(body["chat_id"]))
    user = emulator.world.user(int(body["user_id"]))
    return commands_for(emulator, chat, user)


async def _create_chat(emulator: Emulator, body: dict[str, Any]) -> Any:
    chat = emulator.world.add_chat(
        body["type"],
        title=body.get("title"),
        member_ids=body.get("member_ids", []),
        admin_ids=body.get("admin_ids", []),
        is_forum=body.get("is_forum", False),
        bot_is_admin=body.get("bot_is_admin", False),
    )
    emulator.changes.notify()
    return chat.to_json()


async def _create_topic(emulator: Emulator, body: dict[str, Any]) -> Any:
    thread_id = emulator.world.add_topic(int(body["chat_id"]), body["name"])
    emulator.changes.notify()
    return {"message_thread_id": thread_id}


async def _send(emulator: Emulator, body: dict[str, Any]) -> Any:
    message_id, update = send_text(
        emulator,
        int(body["chat_id"]),
        body["user_id"],
        body["text"],
        body.get("message_thread_id"),
        body.get("reply_to_message_id"),
    )
    return {"message_id": message_id, "update_id": update.update_id if update else None}


async def _press(emulator: Emulator, body: dict[str, Any]) -> Any:
    presses = [Press(**press) for press in body["presses"]]
    return {"callback_query_ids": schedule_presses(emulator, presses)}


async def _transcript(emulator: Emulator, body: dict[str, Any]) -> Any:
    include_users = str(body.get("include_users", "")).lower() == "true"
    chat_id = int(body["chat_id"])
    emulator.world.chat(chat_id)
    return [to_json(m) for m in emulator.world.transcript(chat_id, include_users=include_users)]


async def _toasts(emulator: Emulator, body: dict[str, Any]) -> Any:
    return [to_json(query) for query in emulator.callback_queries.values()]


async def _calls(emulator: Emulator, body: dict[str, Any]) -> Any:
    return [to_json(call) for call in emulator.calls.values()]


async def _violations(emulator: Emulator, body: dict[str, Any]) -> Any:
    return [to_json(violation) for violation in emulator.violations]


async def _updates(emulator: Emulator, body: dict[str, Any]) -> Any:
    return [to_json(update) for update in emulator.updates.history]


async def _not_emulated(emulator: Emulator, body: dict[str, Any]) -> Any:
    return sorted(emulator.not_emulated)


async def _plan_fault(emulator: Emulator, body: dict[str, Any]) -> Any:
    emulator.plan_fault(Fault(**body))
    return {"planned": True}


async def _clear_faults(emulator: Emulator, body: dict[str, Any]) -> Any:
    emulator.faults.clear()
    return {"cleared": True}


async def _kick(emulator: Emulator, body: dict[str, Any]) -> Any:
    update = kick_bot(emulator, int(body["chat_id"]))
    return {"update_id": update.update_id}


async def _pause(emulator: Emulator, body: dict[str, Any]) -> Any:
    emulator.updates.set_paused(True)
    return {"paused": True}


async def _resume(emulator: Emulator, body: dict[str, Any]) -> Any:
    emulator.updates.set_paused(False)
    return {"paused": False}


async def _changes(emulator: Emulator, body: dict[str, Any]) -> Any:
    after = int(body.get("after", -1))
    timeout = float(body.get("timeout", 10.0))
    await emulator.changes.wait_until(lambda: emulator.changes.version > after, timeout)
    return {"version": emulator.changes.version}


async def _idle(emulator: Emulator, body: dict[str, Any]) -> Any:
    idle = await emulator.wait_until_idle(
        float(body.get("quiet", 0.05)), float(body.get("timeout", 10.0))
    )
    return {"idle": idle}


async def _redeliver(emulator: Emulator, body: dict[str, Any]) -> Any:
    update = emulator.updates.redeliver(int(body["update_id"]))
    return {"update_id": update.update_id}


def add_control_routes(app: web.Application) -> None:
    """Add every ``/_emulator/...`` endpoint to ``app``."""
    routes: list[tuple[str, str, Endpoint]] = [
        ("GET", "/bot", _bot),
        ("POST", "/users", _create_user),
        ("PATCH", "/users/{user_id}", _update_user),
        ("PUT", "/users/{user_id}/network", _set_network),
        ("PUT", "/chats/{chat_id}/members/{user_id}", _set_member),
        ("PUT", "/flood", _set_flood),
        ("GET", "/commands", _commands),
        ("POST", "/chats", _create_chat),
        ("POST", "/chats/{chat_id}/topics", _create_topic),
        ("POST", "/chats/{chat_id}/messages", _send),
        ("GET", "/chats/{chat_id}/transcript", _transcript),
        ("POST", "/chats/{chat_id}/kick-bot", _kick),
        ("POST", "/presses", _press),
        ("GET", "/toasts", _toasts),
        ("GET", "/calls", _calls),
        ("GET", "/violations", _violations),
        ("GET", "/updates", _updates),
        ("GET", "/not-emulated", _not_emulated),
        ("POST", "/faults", _plan_fault),
        ("DELETE", "/faults", _clear_faults),
        ("POST", "/delivery/pause", _pause),
        ("POST", "/updates/{update_id}/redeliver", _redeliver),
        ("POST", "/delivery/resume", _resume),
        ("GET", "/changes", _changes),
        ("GET", "/idle", _idle),
    ]
    for method, path, action in routes:
        app.router.add_route(method, f"/_emulator{path}", json_endpoint(EMULATOR_KEY, action))
