"""A table of players driving the real bot through the emulator, as people would."""

from __future__ import annotations

import asyncio
import atexit
import functools
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.exc import OperationalError

from telesnap.app import BotRunner
from telesnap.bot.delivery.pace import FloodLimits
from telesnap.config import Settings
from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.records import Toast, TranscriptMessage
from telesnap.emulator.testing import RunningEmulator
from telesnap.storage.database import create_engine
from telesnap.storage.migrate import upgrade_database
from telesnap.storage.models.outbox import OutboxMessage, OutboxState

PLAYER_LINE = re.compile(
    r"^(?:▶ )?(?P<name>.+?): (?P<top>\S+) · (?P<down>\d+) face-down · (?P<up>\d+) face-up$"
)
TURN_LINE = re.compile(r"^Turn: (?P<name>.+)$")
NO_FLOOD = FloodLimits(enabled=False)


@dataclass
class Board:
    """A board message as players read it."""

    message: TranscriptMessage
    tops: dict[str, str]
    turn: str | None

    @property
    def has_match(self) -> bool:
        ranks = [top[:-1] for top in self.tops.values() if top != "—"]
        return len(ranks) != len(set(ranks))


def read_board(message: TranscriptMessage) -> Board:
    tops: dict[str, str] = {}
    turn = None
    for line in message.text.splitlines():
        if player := PLAYER_LINE.match(line):
            tops[player["name"]] = player["top"]
        elif found := TURN_LINE.match(line):
            turn = found["name"]
    return Board(message, tops, turn)


@dataclass
class Table:
    """A group chat with players, and the bot running against the emulator."""

    running: RunningEmulator
    database_url: str
    chat_id: int
    players: dict[str, int]
    thread_id: int | None = None
    runner: BotRunner | None = None
    shuffle_seed: int | None = 7
    limits: FloodLimits = NO_FLOOD
    clock: Callable[[], datetime] | None = None
    run_timers: bool = True
    seen_boards: set[int] = field(default_factory=set)

    @property
    def client(self) -> EmulatorClient:
        return self.running.client

    async def start_bot(self, *, resume: bool = True) -> BotRunner:
        settings = Settings(
            token=self.running.token, api_url=self.running.url, database_url=self.database_url
        )
        self.runner = BotRunner(
            settings,
            limits=self.limits,
            shuffle_seed=self.shuffle_seed,
            clock=self.clock,
            run_timers=self.run_timers,
            resume=resume,
        )
        await self.runner.start()
        return self.runner

    async def stop_bot(self) -> None:
        if self.runner is not None:
            await self.runner.stop()
            self.runner = None

    async def command(
        self, player: str, command: str, args: str = "", *, reply_to: int | None = None
    ) -> int:
        return await self.client.send_command(
            self.chat_id,
            self.players[player],
            command,
            args,
            message_thread_id=self.thread_id,
            reply_to=reply_to,
        )

    async def say(self, player: str, text: str) -> int:
        """A player writes in the chat (the bot, in privacy mode, does not see it)."""
        return await self.client.send_text(
            self.chat_id, self.players[player], text, message_thread_id=self.thread_id
        )

    async def reply_to(self, message_id: int, limit_s: float = 10.0) -> TranscriptMessage:
        """Wait for the bot's reply to ``message_id``."""
        return await self.client.wait_for_message(
            self.chat_id, lambda m: m.reply_to_message_id == message_id, timeout=limit_s
        )

    async def messages(self) -> list[TranscriptMessage]:
        return [
            m
            for m in await self.client.transcript(self.chat_id)
            if self.thread_id is None or m.message_thread_id == self.thread_id
        ]

    async def wait_for_text(self, fragment: str, limit_s: float = 10.0) -> TranscriptMessage:
        return await self.client.wait_for_message(
            self.chat_id,
            lambda m: (
                fragment in m.text
                and (self.thread_id is None or m.message_thread_id == self.thread_id)
            ),
            timeout=limit_s,
        )

    async def press(self, player: str, message: TranscriptMessage, button: str) -> Toast:
        query_id = await self.client.press(
            self.chat_id, message.message_id, self.players[player], button_text=button
        )
        return await self.client.wait_for_toast(callback_query_id=query_id)

    async def open_and_start(self, names: Sequence[str], limit_s: float = 10.0) -> Board:
        first, *others = names
        await self.command(first, "newgame")
        lobby = await self.wait_for_text("A game of Snap is starting", limit_s)
        for other in others:
            await self.press(other, lobby, "Join")
        await self.press(first, lobby, "Start")
        return await self.next_board(limit_s)

    async def next_board(self, limit_s: float = 10.0) -> Board:
        """Wait for a board message not read before, and read it."""
        message = await self.client.wait_for_message(
            self.chat_id,
            lambda m: (
                m.message_id not in self.seen_boards
                and ("face-down" in m.text or " wins" in m.text)
                and (self.thread_id is None or m.message_thread_id == self.thread_id)
            ),
            timeout=limit_s,
        )
        self.seen_boards.add(message.message_id)
        return read_board(message)

    async def press_action(self, player: str, message: TranscriptMessage, action: str) -> Toast:
        """Press the button whose callback data starts with ``action`` (any language)."""
        data = next(
            button["callback_data"]
            for row in message.buttons
            for button in row
            if button.get("callback_data", "").startswith(f"{action}:")
        )
        query_id = await self.client.press(
            self.chat_id, message.message_id, self.players[player], data=data
        )
        return await self.client.wait_for_toast(callback_query_id=query_id)

    async def fire_timers(self) -> None:
        """Fire the due timers (tests that pass a clock drive the timers by hand).

        First every message the chat is owed is shown and marked so: a turn's clock
        runs from the moment its board was shown, as the players saw it.
        """
        assert self.runner is not None
        assert self.runner.timer_loop is not None
        async with asyncio.timeout(10):  # a failure guard: the mark follows Telegram's reply
            while not await self._nothing_unsent():  # noqa: ASYNC110 (a row, not an event)
                await asyncio.sleep(0.01)  # the mark is a database write: no event to wait on
        await self.runner.timer_loop.run_once()

    async def _nothing_unsent(self) -> bool:
        engine = create_engine(self.database_url)
        try:
            async with engine.connect() as connection:
                pending = await connection.scalar(
                    select(func.count())
                    .select_from(OutboxMessage)
                    .where(
                        OutboxMessage.chat_id == self.chat_id,
                        OutboxMessage.state == OutboxState.PENDING.value,
                    )
                )
        finally:
            await engine.dispose()
        return pending == 0

    async def latest_board(self) -> Board:
        boards = [m for m in await self.messages() if "face-down" in m.text]
        assert boards, "no board yet"
        self.seen_boards.update(m.message_id for m in boards)
        return read_board(boards[-1])


@asynccontextmanager
async def table_with(
    running: RunningEmulator,
    database_url: str,
    names: Sequence[str],
    *,
    forum_topic: str | None = None,
    admins: Sequence[str] = (),
    shuffle_seed: int | None = 7,
    limits: FloodLimits = NO_FLOOD,
    clock: Callable[[], datetime] | None = None,
    languages: dict[str, str] | None = None,
) -> AsyncIterator[Table]:
    client = running.client
    players = {}
    for name in names:
        user = await client.create_user(name, language_code=(languages or {}).get(name, "en"))
        players[name] = int(user["id"])
    chat = await client.create_chat(
        "supergroup" if forum_topic else "group",
        title="Snap club",
        members=list(players.values()),
        admins=[players[name] for name in admins],
        forum=forum_topic is not None,
    )
    table = Table(
        running,
        database_url,
        int(chat["id"]),
        players,
        shuffle_seed=shuffle_seed,
        limits=limits,
        clock=clock,
        run_timers=clock is None,
    )
    if forum_topic is not None:
        table.thread_id = await client.create_topic(table.chat_id, forum_topic)
    await table.start_bot()
    try:
        yield table
    finally:
        await table.stop_bot()


def database_file(tmp_path: Path) -> str:
    """The URL of the test's SQLite file, at the newest migration from its first use.

    The file starts as a copy of one migrated once per test run, so the bot's start
    finds nothing to migrate (tests/storage tests the migrations themselves).
    """
    path = tmp_path / "e2e.db"
    if not path.exists():
        shutil.copyfile(_migrated_template(), path)
    return f"sqlite+aiosqlite:///{path}"


@functools.cache
def _migrated_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="telesnap-e2e-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "template.db"
    with ThreadPoolExecutor(max_workers=1) as executor:  # a loop of its own: callers run one
        executor.submit(asyncio.run, upgrade_database(f"sqlite+aiosqlite:///{path}")).result()
    # The engine is disposed: the write-ahead log was folded into the file, which is whole.
    assert not path.with_name(f"{path.name}-wal").exists(), "the template's WAL is left over"
    return path


async def another_chat(
    table: Table, names: Sequence[str], title: str = "Other club", admins: Sequence[str] = ()
) -> Table:
    """A second group, with players of its own, served by the same running bot as ``table``."""
    client = table.client
    players = {name: int((await client.create_user(name))["id"]) for name in names}
    chat = await client.create_chat(
        "group",
        title=title,
        members=list(players.values()),
        admins=[players[name] for name in admins],
    )
    return Table(table.running, table.database_url, int(chat["id"]), players, runner=table.runner)


async def handed_over_unconfirmed(client: Any, update_kind: str, count: int = 1) -> None:
    """Wait until the newest ``count`` updates of ``update_kind`` were handed to the bot
    at least twice without being confirmed: the bot could not store them, so it never
    acknowledged them, and they came again."""

    async def probe() -> bool | None:
        latest = [u for u in await client.updates() if u.kind == update_kind][-count:]
        waiting = all(len(u.deliveries) >= 2 and not u.confirmed for u in latest)
        return True if len(latest) == count and waiting else None

    await client.wait_for(probe, what=f"{update_kind} handed over again, unconfirmed")


class DatabaseOutage:
    """Makes every statement on the bot's database fail while it is on.

    It hooks SQLAlchemy's ``before_cursor_execute`` event, so the bot meets the
    error a dropped database connection gives (``OperationalError``). With a
    ``clock``, :meth:`for_seconds` switches it on until that clock has moved on
    that far, so tests move a clock instead of waiting.
    """

    def __init__(self, engine: Any, clock: Callable[[], datetime] | None = None) -> None:
        self._engine = engine.sync_engine
        self._clock = clock
        self._until: datetime | None = None
        self.active = False
        self.failures = 0
        event.listen(self._engine, "before_cursor_execute", self._check)

    def for_seconds(self, seconds: float) -> None:
        assert self._clock is not None, "for_seconds needs a clock"
        self._until = self._clock() + timedelta(seconds=seconds)

    def is_down(self) -> bool:
        if self._until is not None and self._clock is not None:
            return self._clock() < self._until
        return self.active

    def _check(self, *args: Any) -> None:
        if self.is_down():
            self.failures += 1
            raise OperationalError("(injected)", None, ConnectionError("database unavailable"))

    def remove(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._check)
