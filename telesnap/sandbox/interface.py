"""The sandbox interface under ``/_sandbox/``: the bot's side, for the page's timeline and clock.

Everything else the page shows comes from the emulator (``/_emulator/``).
Every endpoint takes and returns JSON; a bad request answers 400 with
``{"error": "..."}``. The format is documented in ``docs/sandbox.md``.

- ``GET /_sandbox/``: the clock (``skipped_seconds``, ``now``), the robots, and the
  ``hint`` the page shows in a chat that has no messages yet.
- ``POST /_sandbox/clock/skip`` ``{"seconds": 600}``: move the bot's clock ahead;
  due timers fire at once.
- ``GET /_sandbox/races?chat_id=C[&message_thread_id=T]``: the latest races there.
- ``POST /_sandbox/people`` ``{"first_name", "language_code"}``: a person who is a
  member of every group and has a private chat with the bot.
- ``POST /_sandbox/robots`` ``{"first_name", "reaction_ms", "jitter_ms", "wrong_rate"}``:
  the same, played by a robot; ``PUT /_sandbox/robots/<user_id>`` changes its style.
- ``GET /_sandbox/fonts.css`` and ``GET /_sandbox/fonts/<file>``: the fonts the
  pictures use, for the page (see :mod:`.fonts`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..emulator.control import json_endpoint
from .fonts import font_faces, font_file
from .robots import RobotStyle

if TYPE_CHECKING:
    from .app import Sandbox

SANDBOX_KEY: web.AppKey[Sandbox] = web.AppKey("sandbox")
Endpoint = Callable[["Sandbox", dict[str, Any]], Awaitable[Any]]
LONGEST_SKIP_SECONDS = 7 * 24 * 3600


async def _overview(sandbox: Sandbox, body: dict[str, Any]) -> Any:
    return sandbox.overview()


async def _skip(sandbox: Sandbox, body: dict[str, Any]) -> Any:
    seconds = float(body["seconds"])
    if not 0 < seconds <= LONGEST_SKIP_SECONDS:
        raise ValueError(f"seconds must be more than 0 and at most {LONGEST_SKIP_SECONDS}")
    sandbox.skip(seconds)
    return sandbox.overview()


async def _races(sandbox: Sandbox, body: dict[str, Any]) -> Any:
    thread = body.get("message_thread_id")
    races = await sandbox.races(int(body["chat_id"]), int(thread) if thread else None)
    return [race.to_json() for race in races]


def _style(body: dict[str, Any]) -> RobotStyle:
    defaults = RobotStyle()
    return RobotStyle(
        float(body.get("reaction_ms", defaults.reaction_ms)),
        float(body.get("jitter_ms", defaults.jitter_ms)),
        float(body.get("wrong_rate", defaults.wrong_rate)),
    )


def _name(body: dict[str, Any], fallback: str) -> str:
    name = str(body.get("first_name") or fallback).strip()
    if not 1 <= len(name) <= 64:
        raise ValueError("first_name must be 1-64 characters")
    return name


async def _add_person(sandbox: Sandbox, body: dict[str, Any]) -> Any:
    language = str(body.get("language_code") or "en")
    user = sandbox.add_person(_name(body, "Guest"), language)
    return user.to_json()


async def _add_robot(sandbox: Sandbox, body: dict[str, Any]) -> Any:
    style = _style(body)
    number = len(sandbox.robots.robots) + 1
    user = sandbox.add_person(_name(body, f"🤖 Robot {number}"), body.get("language_code") or "en")
    return sandbox.robots.add(user.id, style).to_json()


async def _change_robot(sandbox: Sandbox, body: dict[str, Any]) -> Any:
    user_id = int(body["user_id"])
    if user_id not in sandbox.robots.robots:
        raise ValueError(f"user {user_id} is not a robot")
    return sandbox.robots.add(user_id, _style(body)).to_json()


async def _font_faces(request: web.Request) -> web.Response:
    return web.Response(text=font_faces(), content_type="text/css", charset="utf-8")


async def _font_file(request: web.Request) -> web.FileResponse:
    path = font_file(request.match_info["name"])
    if path is None:
        raise web.HTTPNotFound()
    return web.FileResponse(path, headers={"Content-Type": "font/ttf"})


def add_sandbox_routes(app: web.Application, sandbox: Sandbox) -> None:
    """Add every ``/_sandbox/...`` endpoint to the emulator's ``app``."""
    app[SANDBOX_KEY] = sandbox
    routes: list[tuple[str, str, Endpoint]] = [
        ("GET", "/", _overview),
        ("POST", "/clock/skip", _skip),
        ("GET", "/races", _races),
        ("POST", "/people", _add_person),
        ("POST", "/robots", _add_robot),
        ("PUT", "/robots/{user_id}", _change_robot),
    ]
    for method, path, action in routes:
        app.router.add_route(method, f"/_sandbox{path}", json_endpoint(SANDBOX_KEY, action))
    app.router.add_get("/_sandbox/fonts.css", _font_faces)
    app.router.add_get("/_sandbox/fonts/{name}", _font_file)
