"""The sandbox: the emulator, the real bot against it, robots, and the page, in one process.

The bot is started by :class:`~telesnap.app.BotRunner`, exactly as ``telesnap
run`` starts it (long polling), pointed at the emulator and given a
:class:`MovableClock` for its timers.
"""

from __future__ import annotations

import logging
import random
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from ..app import BotRunner
from ..bot.delivery.pace import FloodLimits as BotFloodLimits
from ..bot.render.callbacks import CallbackSigner
from ..config import ConfigError, Settings
from ..emulator.changes import ChangeSignal
from ..emulator.config import EmulatorConfig, FloodLimits
from ..emulator.guard import KEY_PARAMETER, new_key
from ..emulator.server import EmulatorServer
from ..emulator.world import User
from ..services.types import display_name
from ..storage.database import create_engine, session_factory
from ..storage.models import Game, GameStatus
from ..support.loops import BackgroundLoop
from ..support.retry import Backoff
from . import roster
from .clock import MovableClock
from .interface import add_sandbox_routes
from .races import Race, recent_races
from .robots import Robots

logger = logging.getLogger(__name__)

DEFAULT_PORT = 8080
SAVE_EVERY_SECONDS = 2.0
DEFAULT_DATABASE_FILE = "telesnap-sandbox.db"
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
EARLIEST = datetime.min.replace(tzinfo=UTC)
"""Earlier than any look the timer loop has planned: wakes it at once."""


@dataclass(frozen=True)
class SandboxOptions:
    """How to run the sandbox."""

    database_url: str = f"sqlite+aiosqlite:///{DEFAULT_DATABASE_FILE}"
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    flood_limits: bool = True
    """Telegram's flood limits in the emulator, and the bot's own pacing."""
    shuffle_seed: int | None = None
    roster_file: Path | None = None
    """Where the people and chats are kept between runs (``None``: nowhere)."""


def sqlite_file(database_url: str) -> Path | None:
    """The file of a SQLite URL, or ``None`` for another database or an in-memory one.

    >>> sqlite_file("sqlite+aiosqlite:///games/x.db"), sqlite_file("sqlite:///:memory:")
    (PosixPath('games/x.db'), None)
    """
    for prefix in ("sqlite+aiosqlite:///", "sqlite:///"):
        if database_url.startswith(prefix):
            path = database_url.removeprefix(prefix)
            return None if path in {"", ":memory:"} else Path(path)
    return None


def _creator_first(entry: tuple[int, str]) -> tuple[bool, int]:
    user_id, role = entry
    return role != "creator", user_id


def _newer(changes: ChangeSignal, version: int) -> bool:
    return changes.version > version


@dataclass(frozen=True)
class OpenLobby:
    """A game waiting in its lobby: at a restart, one the bot does not post again."""

    chat_id: int
    thread_id: int
    creator_id: int


async def _open_lobbies(sessions: async_sessionmaker[AsyncSession]) -> list[OpenLobby]:
    async with sessions() as session:
        lobbies = select(Game.chat_id, Game.thread_id, Game.creator_id).where(
            Game.status == GameStatus.LOBBY
        )
        return [OpenLobby(*row) for row in await session.execute(lobbies.order_by(Game.id))]


class Sandbox:
    """Starts and stops everything ``telesnap sandbox`` runs."""

    def __init__(self, options: SandboxOptions) -> None:
        self.options = options
        self.clock = MovableClock()
        self.key = new_key()
        """This run's key, without which the page, ``/_emulator/`` and ``/_sandbox/`` refuse."""
        config = EmulatorConfig(
            flood=FloodLimits(enabled=options.flood_limits), access_key=self.key
        )
        self.server = EmulatorServer(config, extension=self._extend)
        self.emulator = self.server.emulator
        self.robots = Robots(self.emulator, CallbackSigner.for_token(config.token), random.Random())
        self.runner: BotRunner | None = None
        self.url = ""
        """The base address, ``http://127.0.0.1:PORT/`` (the page and the API need :attr:`key`)."""
        self.page_url = ""
        """The page's address with this run's key: what the operator opens."""
        self._made_database = False
        self._engine: AsyncEngine | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None
        self._saver: BackgroundLoop | None = None
        self._saved_version = 0
        self._world_ready = False
        self._restored = False
        self._lobbies_at_start: list[OpenLobby] = []
        """The lobbies open when the run before this one stopped."""
        self.saves = ChangeSignal()
        """Bumped each time the chats are saved (tests wait on it)."""

    def _extend(self, app: web.Application) -> None:
        add_sandbox_routes(app, self)

    async def start(self) -> str:
        """Start the emulator, restore or create the chats, start the bot; return the page URL.

        The page URL carries this run's key (see :mod:`telesnap.emulator.guard`).
        """
        options = self.options
        try:
            server_url = await self.server.start(options.host, options.port)
        except socket.gaierror:
            raise  # a host that names no address: the command line names its option
        except OSError as error:  # a port in use: the machine refuses, not a setting
            where = f"{options.host}:{options.port}"
            raise OSError(f"cannot listen on {where}: {error.strerror or error}") from None
        try:
            await self._start_the_rest(server_url)
        except BaseException:
            await self.stop()  # nothing half-started stays behind (the listening socket above all)
            raise
        return self.page_url

    async def _start_the_rest(self, server_url: str) -> None:
        options = self.options
        port = server_url.rpartition(":")[2]
        local_host = "127.0.0.1" if options.host in WILDCARD_HOSTS else options.host
        shown_host = f"[{local_host}]" if ":" in local_host else local_host
        self.url = f"http://{shown_host}:{port}/"
        self.page_url = f"{self.url}?{KEY_PARAMETER}={self.key}"
        database_file = sqlite_file(options.database_url)
        self._made_database = (database_file is not None and not database_file.exists()) or (
            options.roster_file is not None and roster.made_database(options.roster_file)
        )
        skipped = None
        if options.roster_file is not None:
            try:
                skipped = roster.restore(options.roster_file, self.emulator, self.robots)
            except (ValueError, KeyError, TypeError) as error:
                raise ConfigError(
                    f"{options.roster_file} cannot be read ({error}); --fresh starts over"
                ) from None
        self._restored = skipped is not None
        if skipped is None:
            roster.create_first_world(self.emulator)
        elif skipped > 0:
            self.clock.skip(skipped)
        self._world_ready = True  # from here on the chats may be saved over the file
        if options.roster_file is not None:
            self._save(options.roster_file)  # marks the database as the sandbox's from the start
        settings = Settings(
            token=self.emulator.config.token,
            api_url=f"http://{shown_host}:{port}",
            database_url=options.database_url,
        )
        self.runner = BotRunner(
            settings,
            limits=BotFloodLimits() if options.flood_limits else BotFloodLimits(enabled=False),
            shuffle_seed=options.shuffle_seed,
            clock=self.clock,
            wall_time_of=self.clock.wall_time_at,
        )
        await self.runner.start()
        self._engine = create_engine(options.database_url)
        self._sessions = session_factory(self._engine)
        if self._restored:
            self._lobbies_at_start = await _open_lobbies(self._sessions)
        self.robots.start()
        if options.roster_file is not None:
            self._saved_version = self.emulator.changes.version
            # A failed save is tried again at the next change, as soon as a save may be.
            self._saver = BackgroundLoop(
                partial(self._save_if_changed, options.roster_file),
                what=f"saving the sandbox's chats to {options.roster_file}",
                logger=logger,
                backoff=Backoff(SAVE_EVERY_SECONDS, SAVE_EVERY_SECONDS),
            )
            self._saver.start()

    async def _save_if_changed(self, path: Path) -> float:
        """Save the chats after each change (at most every few seconds), so a crash loses little."""
        changes = self.emulator.changes
        await changes.wait_until(partial(_newer, changes, self._saved_version), 60.0)
        if changes.version == self._saved_version:
            return 0.0
        self._saved_version = changes.version
        self._save(path)
        return SAVE_EVERY_SECONDS

    def _save(self, path: Path) -> None:
        roster.save(
            path,
            self.emulator,
            self.robots,
            self.clock.skipped_seconds,
            made_database=self._made_database,
        )
        self.saves.notify()

    async def stop(self) -> None:
        """Save the chats, stop the robots and the bot, close the emulator."""
        if self._saver is not None:
            await self._saver.stop()
            self._saver = None
        if self.options.roster_file is not None and self._world_ready:
            self._save(self.options.roster_file)
        await self.robots.stop()
        if self.runner is not None:
            await self.runner.stop()
            self.runner = None
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
        await self.server.stop()

    def overview(self) -> dict[str, Any]:
        """The clock and the robots, as ``GET /_sandbox/`` answers."""
        return {
            "clock": {
                "skipped_seconds": self.clock.skipped_seconds,
                "now": self.clock().isoformat(),
            },
            "robots": [robot.to_json() for robot in self.robots.robots.values()],
            "hint": self.first_hint(),
        }

    def first_hint(self) -> str:
        """What to do first, with the people's names: shown in a group with no messages yet.

        After a restart the panes are empty and ``/newgame`` where a lobby is open only says a game
        is open: the hint then starts with how to bring that lobby back.
        """
        world = self.emulator.world
        groups = [chat for chat in world.chats.values() if chat.type != "private"]
        people = {user.id: user for user in world.users.values() if not user.is_bot}
        in_group = (
            [
                people[user_id]
                for user_id, role in sorted(groups[0].roles.items(), key=_creator_first)
                if user_id in people and role not in {"left", "kicked"}
            ]
            if groups
            else []
        )
        lobbies = self._lobby_hint()
        if len(in_group) < 2:
            if lobbies:
                return f"{lobbies} For a new game elsewhere, send /newgame."
            return "Send /newgame here to open a game of Snap."
        host, guest = (display_name(user.first_name, user.last_name) for user in in_group[:2])
        steps = f"press Join in {guest}'s pane, then Start in {host}'s."
        if lobbies:
            return f"{lobbies} For a new game elsewhere, send /newgame in {host}'s pane, {steps}"
        return f"Send /newgame in {host}'s pane to open a game of Snap, {steps}"

    def _lobby_hint(self) -> str:
        """Where the lobbies open at the last stop are, and who brings each back ("": none)."""
        world = self.emulator.world
        places: list[str] = []
        creators: list[str] = []
        for lobby in self._lobbies_at_start:
            chat = world.chats.get(lobby.chat_id)
            if chat is None:
                continue
            topic = chat.topics.get(lobby.thread_id) if chat.is_forum else None
            places.append(f"{chat.title} › {topic}" if topic else str(chat.title))
            creator = world.users.get(lobby.creator_id)
            creators.append(
                display_name(creator.first_name, creator.last_name) if creator else "its creator"
            )
        if not places:
            return ""
        if len(places) == 1:
            return (
                f"A game was open in {places[0]} when the sandbox stopped: send /extend in "
                f"{creators[0]}'s pane there to bring it back (or /startgame to start it)."
            )
        return (
            f"Games were open in {', '.join(places)} when the sandbox stopped: each one's creator "
            "sends /extend there to bring it back (or /startgame to start it)."
        )

    def skip(self, seconds: float) -> None:
        """Move the bot's clock ahead and let the timers that came due fire."""
        self.clock.skip(seconds)
        if self.runner is not None and self.runner.timer_loop is not None:
            self.runner.timer_loop.wake(EARLIEST)
        self.emulator.changes.notify()

    async def races(self, chat_id: int, thread_id: int | None) -> list[Race]:
        """The latest races of a chat or topic, from the games' history."""
        if self._sessions is None:
            raise ValueError("the bot is not running yet")
        self.emulator.world.chat(chat_id)
        return await recent_races(self._sessions, chat_id, thread_id)

    def add_person(self, first_name: str, language_code: str) -> User:
        """A new user, a member of every group and forum, with a private chat with the bot."""
        world = self.emulator.world
        user = world.add_user(first_name, language_code=language_code)
        for chat in list(world.chats.values()):
            if chat.type != "private":
                chat.roles[user.id] = "member"
        world.add_chat("private", member_ids=[user.id])
        self.emulator.changes.notify()
        return user
