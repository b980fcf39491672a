"""Random games played through the real services, for the stats tests.

Players flip in turn, call correct and wrong snaps (with reaction times: every
board is reported as shown a few hundred ms before the calls), leave, get
kicked or removed as AFK, and some games are stopped (abandoned).
"""

from __future__ import annotations

import contextlib
import itertools
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import CallKind, LeaveReason
from telesnap.services.chat_settings import SettingsService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.races import RaceService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Receipt, Refused
from telesnap.services.views import TableView
from telesnap.storage.uow import UnitsOfWork

from ..admin import known_admin
from .boards_sent import board_sent
from .race_helpers import decide_open_race

START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
CHATS = (Place(-101, title="One"), Place(-102, title="Two"))
PLAYERS = tuple(Actor(10 + i, name) for i, name in enumerate(["Ann", "Bob", "Cid", "Dee", "Eve"]))


@dataclass
class Driver:
    sessions: async_sessionmaker[AsyncSession]
    rng: random.Random
    store: GameStore = field(default_factory=GameStore)
    clock_ms: int = 0
    update_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.lobby = LobbyService(UnitsOfWork(self.sessions), self.store)
        self.play = PlayService(UnitsOfWork(self.sessions), self.store)
        self.races = RaceService(UnitsOfWork(self.sessions), self.store)
        self.settings = SettingsService(UnitsOfWork(self.sessions), self.store)

    def receipt(self, advance_ms: int = 1) -> Receipt:
        self.clock_ms += advance_ms
        wall = START + timedelta(milliseconds=self.clock_ms)
        return Receipt(self.clock_ms * 1_000_000, wall, next(self.update_ids))

    async def play_games(self, count: int) -> None:
        for place in CHATS:
            await self.settings.change(
                place, PLAYERS[0], "flip_limit", "40", is_admin=known_admin(True)
            )
        for _ in range(count):
            place = self.rng.choice(CHATS)
            seated = self.rng.sample(PLAYERS, self.rng.randint(2, 4))
            await self.play_one(place, list(seated))

    async def play_one(self, place: Place, seated: list[Actor]) -> None:
        await self.start_one(place, seated)
        await self.finish_one(place, seated)

    async def start_one(self, place: Place, seated: list[Actor]) -> int:
        """Open, fill and start a game at ``place``; return its id."""
        self.lobby.shuffle_seed = self.rng.randrange(1 << 30)
        await self.lobby.open(place, seated[0], self.receipt())
        for actor in seated[1:]:
            await self.lobby.join(place, actor, self.receipt())
        await self.lobby.start(place, seated[0], is_admin=known_admin(True), receipt=self.receipt())
        return (await self.play.table(place)).table.game_id

    async def finish_one(self, place: Place, seated: list[Actor]) -> None:
        """Play the game at ``place`` until it ends."""
        for _ in range(500):
            try:
                table = (await self.play.table(place)).table
            except Refused:
                return  # the game is over
            await self.step(place, seated, table)
        raise AssertionError("a game did not end in 500 steps")

    async def step(self, place: Place, seated: list[Actor], table: TableView) -> None:
        """One action."""
        rng = self.rng
        active = [p for p in table.players if p.status.value == "active"]
        actors = {actor.user_id: actor for actor in seated}
        roll = rng.random()
        if roll < 0.0015:
            await self.lobby.end(
                place, seated[0], is_admin=known_admin(True), receipt=self.receipt()
            )
            return
        if roll < 0.01 and len(active) > 1:
            leaver = rng.choice(active)
            reason = rng.choice(list(LeaveReason))
            await self.remove(place, seated[0], actors[leaver.user_id], reason)
        elif roll < 0.08 and active:
            await self.shown(place, table)
            caller = actors[rng.choice(active).user_id]
            kind = rng.choice(list(CallKind))
            await self.call(place, caller, kind, table.board_version, rng.randint(150, 900))
            await decide_open_race(self.races, place)
        else:
            ranks = [p.top.rank for p in active if p.top]
            if len(ranks) != len(set(ranks)) and rng.random() < 0.9:
                await self.shown(place, table)
                callers = rng.sample(active, rng.randint(1, min(3, len(active))))
                for index, caller in enumerate(callers):
                    delay = rng.randint(0, 150) if index else rng.randint(120, 700)
                    await self.call(
                        place, actors[caller.user_id], CallKind.SNAP, table.board_version, delay
                    )
                await decide_open_race(self.races, place)
            else:
                turn = table.turn_player
                assert turn is not None
                await self.play.flip(place, actors[turn.user_id], self.receipt(30))

    async def shown(self, place: Place, table: TableView) -> None:
        await board_sent(
            self.sessions, place, table.game_id, table.board_version, 1, self.receipt(0)
        )

    async def call(
        self, place: Place, actor: Actor, kind: CallKind, version: int, delay_ms: int
    ) -> None:
        with contextlib.suppress(Refused):
            await self.play.call(place, actor, kind, self.receipt(delay_ms), version)

    async def remove(
        self, place: Place, manager: Actor, leaver: Actor, reason: LeaveReason
    ) -> None:
        if reason is LeaveReason.LEFT:
            await self.lobby.leave(place, leaver, self.receipt())
        elif reason is LeaveReason.REMOVED:
            await self.lobby.kick(
                place, manager, leaver.user_id, is_admin=known_admin(True), receipt=self.receipt()
            )
        else:
            # No AFK timer exists yet: remove the player the way it will, with reason AFK.
            async with self.lobby._change(place, self.receipt()) as uow:
                row = await self.lobby._running_game(uow, place)
                await self.lobby._remove_from_running(
                    uow, row, manager, leaver.user_id, LeaveReason.AFK, self.receipt(0)
                )
