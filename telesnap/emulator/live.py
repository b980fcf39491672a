"""What the browser page reads: the page itself, the state, live changes and files.

- ``GET /`` and ``GET /page/<file>``: the page, static files shipped in the package.
- ``GET /_emulator/state``: a snapshot of the state (see :mod:`.state`).
- ``GET /_emulator/live``: a WebSocket; a snapshot, then a message of changes
  each time something changes (no polling).
- ``GET /_emulator/files/<file_id>``: an uploaded file, for the page.
- ``GET /file/bot<token>/<file_path>``: the same file by its ``getFile`` path,
  as Telegram serves downloads to bots.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial
from importlib import resources

from aiohttp import WSMsgType, web

from .control import EMULATOR_KEY
from .core import Emulator
from .files import StoredFile
from .state import StateFeed

logger = logging.getLogger(__name__)

PAGE_FILES = {
    "index.html": "text/html",
    "sandbox.css": "text/css",
    "render.js": "text/javascript",
    "sandbox.js": "text/javascript",
}
KEEPALIVE_SECONDS = 25.0


def _page_file(name: str) -> web.Response:
    if name not in PAGE_FILES:
        raise web.HTTPNotFound()
    body = resources.files(__package__).joinpath("page", name).read_bytes()
    return web.Response(
        body=body,
        content_type=PAGE_FILES[name],
        charset="utf-8",
        headers={"Cache-Control": "no-cache"},
    )


async def handle_index(request: web.Request) -> web.Response:
    """The page."""
    return _page_file("index.html")


async def handle_page_file(request: web.Request) -> web.Response:
    """The page's style sheet and script."""
    return _page_file(request.match_info["name"])


async def handle_state(request: web.Request) -> web.Response:
    """A snapshot of everything the page shows."""
    return web.json_response(StateFeed(request.app[EMULATOR_KEY]).snapshot())


async def handle_live(request: web.Request) -> web.WebSocketResponse:
    """Send a snapshot, then the changes each time the emulator's state changes."""
    emulator = request.app[EMULATOR_KEY]
    socket = web.WebSocketResponse(heartbeat=KEEPALIVE_SECONDS)
    await socket.prepare(request)
    sender = asyncio.create_task(_send_changes(emulator, socket))
    try:
        async for message in socket:  # the page only listens; this notices it going
            if message.type == WSMsgType.ERROR:
                break
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender
    return socket


async def _send_changes(emulator: Emulator, socket: web.WebSocketResponse) -> None:
    feed = StateFeed(emulator)
    try:
        seen = emulator.changes.version
        await socket.send_json(feed.snapshot())
        while not socket.closed:
            await emulator.changes.wait_until(
                partial(_newer_than, emulator, seen), KEEPALIVE_SECONDS
            )
            if emulator.changes.version == seen:
                continue
            # Let the rest of this burst of changes (a call and its answer) land first.
            await asyncio.sleep(0)
            seen = emulator.changes.version
            await socket.send_json(feed.changes())
    except ConnectionResetError:
        logger.info("a page went away while being sent changes")


def _newer_than(emulator: Emulator, version: int) -> bool:
    return emulator.changes.version > version


def _file_response(stored: StoredFile | None, *, attachment: bool) -> web.Response:
    if stored is None:
        raise web.HTTPNotFound(text="file not found (never uploaded, or forgotten)")
    headers = {}
    if attachment:
        safe_name = stored.file_name.replace('"', "").replace("\\", "")
        headers["Content-Disposition"] = f'attachment; filename="{safe_name}"'
    return web.Response(body=stored.content, content_type=stored.content_type, headers=headers)


async def handle_file(request: web.Request) -> web.Response:
    """An upload by ``file_id``: a photo or an animation inline, a document as a download."""
    emulator = request.app[EMULATOR_KEY]
    stored = emulator.files.get(request.match_info["file_id"])
    shown = ("photo-", "animation-")
    attachment = stored is not None and not stored.file_id.startswith(shown)
    return _file_response(stored, attachment=attachment)


async def handle_bot_file(request: web.Request) -> web.Response:
    """A download by ``getFile`` path, for the bot (its token in the URL)."""
    emulator = request.app[EMULATOR_KEY]
    if request.match_info["token"] != emulator.config.token:
        raise web.HTTPUnauthorized()
    return _file_response(emulator.files.by_path(request.match_info["path"]), attachment=False)


def add_live_routes(app: web.Application) -> None:
    """Add the page, the state, the live feed and the file downloads to ``app``."""
    app.router.add_get("/", handle_index)
    app.router.add_get("/page/{name}", handle_page_file)
    app.router.add_get("/_emulator/state", handle_state)
    app.router.add_get("/_emulator/live", handle_live)
    app.router.add_get("/_emulator/files/{file_id}", handle_file)
    app.router.add_get("/file/bot{token}/{path:.+}", handle_bot_file)
