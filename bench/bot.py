"""Bot benchmark: presses per second and press latency, the full bot against a bare PTB bot.

Run: .venv/bin/python bench/bot.py [--games 8] [--seconds 20] [--tie-window 100]
         [--postgres-url postgresql+asyncpg://postgres@127.0.0.1:5432/test] [--workers N]

With ``--workers N`` (and a PostgreSQL URL) it runs bench/workers.py instead:
the full bot as 1, 2, … N webhook workers behind nginx, in one report.

Up to four runs, one after the other, each with its own emulator (flood
limits off, bench/emulator_server.py), bot and driver in separate processes:

1. bare: bench/bare_bot.py, python-telegram-bot as shipped (httpx) answering a
   press and editing the message, no database: the floor the framework sets.
2. bare on aiohttp: the same bot on the aiohttp backend the full bot uses, to
   show what the full bot costs beyond its transport.
3. full bot on SQLite (a fresh file in a temporary directory).
4. full bot on PostgreSQL, when --postgres-url (or TELESNAP_BENCH_POSTGRES_URL)
   is given: a fresh database telesnap_bench_<pid>, dropped afterwards.

The driver plays G games at once (G group chats of 3 players): the turn player
presses Flip; when the board shows a match, one player (sometimes two, a few
ms apart) presses Snap!. Each game waits for the toasts of its presses and
for the next board before its next move. The bare run presses one button in
each of G chats, waiting for each toast before the next press.

Every figure comes from the emulator's records, on its clock: a press counts
if it was handed to the bot inside the measured window (after the warm-up)
and answered. Flip latency is the answer time minus the hand-over; Snap
latency is the answer time minus the close of the tie window (the hand-over
of the race's first call plus the tie window). The "longest" column is the
longest any press waited from its hand-over to its answer.

The goal lines (issue 19), each reported met or not, never a gate: the full bot
reaches 30% of the bare aiohttp bot's presses per second on SQLite and 25% on
PostgreSQL, spends at most 4 times its CPU per press, makes at most 2 commits
and 6 statements per press on SQLite (``BEGIN IMMEDIATE`` counted), and keeps
its Snap p99 under 100 ms there with 8 games at full speed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from telesnap.bot.ingress.gate import GateLimits
from telesnap.config import normalize_database_url
from telesnap.emulator.client import EmulatorClient, EmulatorTimeoutError, Press
from telesnap.emulator.records import Toast, TranscriptMessage, from_json

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
PYTHON = sys.executable
GOAL_RATIOS = {"full bot, SQLite": 0.30, "full bot, PostgreSQL": 0.25}
"""Issue 19's goals: the full bot's presses/s against the bare aiohttp bot's, same run."""
GOAL_COMMITS = 2.0
GOAL_STATEMENTS = 6.0
"""At most this many per press on SQLite."""
GOAL_CPU_RATIO = 4.0
"""CPU per press at most this many times the bare aiohttp bot's."""
SNAP_P99_GOAL_MS = 100.0
"""Snap p99 on SQLite, 8 games at full speed. Every goal is a report, never a gate."""
BARE_LABELS = {"httpx": "bare PTB bot", "aiohttp": "bare PTB bot, aiohttp"}
PLAYERS = ("Ann", "Bob", "Cid")
DOUBLE_SNAP_SHARE = 0.3
"""How often two players press Snap! on one match (the second 2-30 ms after the first)."""
WAIT_S = 15.0
"""How long a game waits for a toast or a board before giving up (a failure guard)."""
START_S = 60.0
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
SHUFFLE_SEED = "7"

PLAYER_LINE = re.compile(r"^(?:▶ )?(?P<name>.+?): (?P<top>\S+) · \d+ face-down · \d+ face-up$")
TURN_LINE = re.compile(r"^Turn: (?P<name>.+)$")

_children: list[asyncio.subprocess.Process] = []


# -- the emulator, with the bench's cheap long polls ------------------------------------


class BenchClient(EmulatorClient):
    """The emulator's control client plus the waits of bench/emulator_server.py."""

    async def wait_toasts(self, ids: Sequence[str]) -> dict[str, Toast]:
        body = await self._request(
            "POST", "/bench/toasts", json={"ids": list(ids), "timeout": WAIT_S}
        )
        if not body["done"]:
            raise EmulatorTimeoutError(f"presses {list(ids)} not answered in {WAIT_S} s")
        return {key: from_json(Toast, value) for key, value in body["toasts"].items()}

    async def wait_message(self, chat_id: int, after: int) -> TranscriptMessage:
        """The chat's newest bot message, once there is one newer than message ``after``."""
        body = await self._request(
            "POST", "/bench/board", json={"chat_id": chat_id, "after": after, "timeout": WAIT_S}
        )
        if body["message"] is None:
            raise EmulatorTimeoutError(f"no bot message after {after} in chat {chat_id}")
        return from_json(TranscriptMessage, body["message"])

    async def now(self) -> float:
        now: float = (await self._request("GET", "/bench/now"))["now"]
        return now


# -- child processes --------------------------------------------------------------------


async def start_child(
    args: Sequence[str], log: Path, env: dict[str, str] | None = None, *, pipe: bool = False
) -> asyncio.subprocess.Process:
    with log.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            *args,
            stdout=asyncio.subprocess.PIPE if pipe else log_file,
            stderr=log_file,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            cwd=log.parent,
        )
    _children.append(process)
    return process


async def stop_child(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(process.wait(), 10.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


def kill_children() -> None:
    """The last resort (Ctrl-C twice, or an error while stopping): kill what still runs."""
    for process in _children:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def emulator(workdir: Path) -> AsyncIterator[tuple[BenchClient, str, int]]:
    """Start an emulator; yield its client, its URL and its process id."""
    process = await start_child(
        [PYTHON, str(BENCH / "emulator_server.py")], workdir / "emulator.log", pipe=True
    )
    client: BenchClient | None = None
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), START_S)).decode()
        if not line.startswith("emulator "):
            raise RuntimeError(f"the emulator did not start: {tail(workdir / 'emulator.log')}")
        url = line.split()[1]
        client = BenchClient(url)
        yield client, url, process.pid
    finally:
        if client is not None:
            await client.close()
        await stop_child(process)


@contextlib.asynccontextmanager
async def bot_process(
    client: BenchClient, args: Sequence[str], log: Path, env: dict[str, str] | None = None
) -> AsyncIterator[int]:
    """Start a bot and wait until it polls; yield its process id."""
    process = await start_child(args, log, env)
    try:
        polling = asyncio.ensure_future(client.wait_for_call("getUpdates", timeout=START_S))
        exited = asyncio.ensure_future(process.wait())
        await asyncio.wait({polling, exited}, return_when=asyncio.FIRST_COMPLETED)
        exited.cancel()
        if not polling.done():
            polling.cancel()
            raise RuntimeError(f"the bot exited at start: {tail(log)}")
        polling.result()
        yield process.pid
    finally:
        await stop_child(process)


def tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time so far of a process and its children (Linux); NaN where unknown.

    The children count: nginx's master only hands the work to its worker processes.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, IndexError):
        return math.nan
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(int(child)) for child in children)


# -- what a run records -----------------------------------------------------------------


@dataclass
class Run:
    """The presses of one run, to be matched against the emulator's records."""

    label: str
    flips: list[str] = field(default_factory=list)
    races: list[list[str]] = field(default_factory=list)
    errors: int = 0
    games_started: int = 0
    budget_wait_s: float = 0.0
    """How long the players waited to keep within the bot's press budget."""


@dataclass
class Result:
    label: str
    seconds: float
    presses: int
    flip_ms: list[float]
    snap_ms: list[float]
    longest_wait_ms: float
    """The longest any press waited, from its hand-over to its answer."""
    cpu: dict[str, float]
    errors: int
    games_started: int
    budget_wait_s: float = 0.0
    database: dict[str, float] = field(default_factory=dict)
    """Statements and commits per press in the measured window (bench/counted.py's counts)."""
    postgres: dict[str, float] = field(default_factory=dict)
    """PostgreSQL's own counters per press (bench/workers.py: the whole run)."""

    @property
    def rate(self) -> float:
        return self.presses / self.seconds


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0..1); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


async def measure(
    client: BenchClient, run: Run, start: float, stop: float, tie_window_s: float
) -> tuple[int, list[float], list[float], float]:
    """Count the answered presses handed over in [start, stop) and their latencies (ms).

    Also the longest wait of any of them: its answer time minus its hand-over.
    """
    handed_over = {
        update.payload["callback_query"]["id"]: update.deliveries[0].at
        for update in await client.updates()
        if update.kind == "callback_query" and update.deliveries
    }
    answered = {
        toast.callback_query_id: toast.answered_at
        for toast in await client.toasts()
        if toast.answered_at is not None
    }

    def inside(query_id: str) -> bool:
        return query_id in answered and start <= handed_over.get(query_id, -math.inf) < stop

    flip_ms = [
        (answered[query] - handed_over[query]) * 1000 for query in run.flips if inside(query)
    ]
    snap_ms: list[float] = []
    snaps = 0
    waits = [(answered[query] - handed_over[query]) * 1000 for query in run.flips if inside(query)]
    for race in run.races:
        firsts = [handed_over[query] for query in race if query in handed_over]
        if not firsts or not start <= min(firsts) < stop:
            continue
        closes = min(firsts) + tie_window_s
        for query in race:
            if query in answered:
                snaps += 1
                snap_ms.append((answered[query] - closes) * 1000)
                if query in handed_over:
                    waits.append((answered[query] - handed_over[query]) * 1000)
    return len(flip_ms) + snaps, flip_ms, snap_ms, max(waits, default=math.nan)


# -- the games --------------------------------------------------------------------------


@dataclass
class Board:
    message: TranscriptMessage
    tops: dict[str, str]
    turn: str | None

    @classmethod
    def read(cls, message: TranscriptMessage) -> Board:
        tops: dict[str, str] = {}
        turn = None
        for line in message.text.splitlines():
            if player := PLAYER_LINE.match(line):
                tops[player["name"]] = player["top"]
            elif found := TURN_LINE.match(line):
                turn = found["name"]
        return cls(message, tops, turn)

    @property
    def is_over(self) -> bool:
        return "Flip" not in self.message.button_texts

    @property
    def has_match(self) -> bool:
        ranks = [top[:-1] for top in self.tops.values() if top != "—"]
        return len(ranks) != len(set(ranks))


PRESS_BUDGET = GateLimits().presses_per_user
"""The bot turns a user's presses away past this (bot/ingress/gate.py): the players keep within
it, with a margin for the clocks, as a script that plays by the README's budgets does."""


@dataclass
class Table:
    client: BenchClient
    chat_id: int
    players: dict[str, int]
    last_seen: int = 0
    pressed: dict[str, deque[float]] = field(default_factory=dict)
    """Each player's press times (the driver's clock), over the press budget's window."""

    async def within_budget(self, run: Run, *players: str) -> None:
        """Wait until each of ``players`` may press again without meeting the bot's budget."""
        loop = asyncio.get_running_loop()
        count, window = PRESS_BUDGET.count - 2, PRESS_BUDGET.seconds + 0.25
        for player in players:
            times = self.pressed.setdefault(player, deque())
            while times and times[0] <= loop.time() - window:
                times.popleft()
            if len(times) >= count:
                wait = times[0] + window - loop.time()
                run.budget_wait_s += max(wait, 0.0)
                await asyncio.sleep(max(wait, 0.0))
                times.popleft()
            times.append(loop.time())

    async def message_with(self, fragment: str) -> TranscriptMessage:
        """Wait for a new bot message containing ``fragment`` (skipping others)."""
        while True:
            message = await self.client.wait_message(self.chat_id, self.last_seen)
            self.last_seen = message.message_id
            if fragment in message.text:
                return message

    async def press(self, player: str, message: TranscriptMessage, button: str) -> str:
        user = self.players[player]
        return await self.client.press(self.chat_id, message.message_id, user, button_text=button)

    async def new_game(self, run: Run) -> Board:
        await self.client.send_command(self.chat_id, self.players[PLAYERS[0]], "newgame")
        lobby = await self.message_with("A game of Snap is starting")
        for player in PLAYERS[1:]:
            await self.client.wait_toasts([await self.press(player, lobby, "Join")])
        await self.client.wait_toasts([await self.press(PLAYERS[0], lobby, "Start")])
        run.games_started += 1
        return Board.read(await self.message_with("face-down"))


async def open_table(client: BenchClient, number: int, tie_window_ms: int) -> Table:
    players = {name: int((await client.create_user(name))["id"]) for name in PLAYERS}
    chat = await client.create_chat(
        "group",
        title=f"Snap bench {number}",
        members=list(players.values()),
        admins=[players["Ann"]],
    )
    table = Table(client, int(chat["id"]), players)
    await client.send_command(
        table.chat_id, players["Ann"], "settings", f"tie_window {tie_window_ms}"
    )
    await table.message_with("Saved.")
    return table


async def play(table: Table, run: Run, until: float, rng: random.Random) -> None:
    """Play games at this table until the driver's clock reaches ``until``."""
    loop = asyncio.get_running_loop()
    client = table.client
    board = await table.new_game(run)
    while loop.time() < until:
        if board.is_over:
            board = await table.new_game(run)
            continue
        try:
            if board.has_match:
                names = list(board.tops)
                callers = rng.sample(names, 2 if rng.random() < DOUBLE_SNAP_SHARE else 1)
                await table.within_budget(run, *callers)
                offsets = [0.0, rng.uniform(0.002, 0.03)]
                presses = [
                    Press(
                        table.chat_id,
                        board.message.message_id,
                        table.players[name],
                        button_text="Snap!",
                        offset=offset,
                    )
                    for name, offset in zip(callers, offsets, strict=False)
                ]
                race = await client.press_many(presses)
                run.races.append(race)
                await client.wait_toasts(race)
            elif board.turn in table.players:
                await table.within_budget(run, board.turn)
                flip = await table.press(board.turn, board.message, "Flip")
                run.flips.append(flip)
                await client.wait_toasts([flip])
        except (ValueError, EmulatorTimeoutError) as error:
            # A refused press, or one left unanswered: note it, go on from the newest board.
            run.errors += 1
            print(f"  {run.label}: chat {table.chat_id}: {error}", file=sys.stderr)
        board = Board.read(await client.wait_message(table.chat_id, table.last_seen))
        table.last_seen = board.message.message_id


async def press_loop(
    client: BenchClient, chat_id: int, user: int, message_id: int, run: Run, until: float
) -> None:
    loop = asyncio.get_running_loop()
    while loop.time() < until:
        query = await client.press(chat_id, message_id, user, data="press")
        run.flips.append(query)
        await client.wait_toasts([query])


# -- the runs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    games: int
    seconds: float
    warmup: float
    tie_window_ms: int
    seed: int
    profile: Path | None = None
    """Where py-spy writes the bot's collapsed stacks of the measured window (None: no profile)."""
    cprofile: Path | None = None
    """Where cProfile writes each bot's statistics of the measured window (None: no profile)."""


def counted_env(workdir: Path, options: Options) -> dict[str, str]:
    """The environment bench/counted.py reads: where to write its counts (and profiles)."""
    counts = workdir / "counts"
    counts.mkdir(exist_ok=True)
    env = {"TELESNAP_BENCH_COUNTS": str(counts)}
    if options.cprofile is not None:
        options.cprofile.mkdir(parents=True, exist_ok=True)
        env["TELESNAP_BENCH_CPROFILE"] = str(options.cprofile.resolve())
    return env


COUNTED = [PYTHON, str(BENCH / "counted.py")]
"""How the full bot is started: ``telesnap`` under bench/counted.py."""


async def database_counts(pids: Sequence[int], folder: Path | None) -> dict[str, int]:
    """Signal each counted bot to write its counts; their sum (empty without ``folder``)."""
    if folder is None:
        return {}
    before = {pid: _read_counts(folder / f"{pid}.json").get("signal", 0) for pid in pids}
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGUSR1)
    total: dict[str, int] = {}
    for pid in pids:
        deadline = time.monotonic() + 5.0
        counts = _read_counts(folder / f"{pid}.json")
        while counts.get("signal", 0) <= before[pid] and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
            counts = _read_counts(folder / f"{pid}.json")
        for name, value in counts.items():
            if name != "signal":
                total[name] = total.get(name, 0) + value
    return total


def _read_counts(path: Path) -> dict[str, int]:
    try:
        counts: dict[str, int] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return counts


def database_work(per_press: dict[str, float]) -> tuple[str, str]:
    """The counts per press (statements, commits, rollbacks, connection held), then by kind."""
    counts = [
        f"{value / 1000:.1f} ms holding a connection"
        if name == "held_us"
        else f"{value:.1f} {name}"
        for name, value in per_press.items()
        if not name.startswith("kind:")
    ]
    kinds = sorted(
        ((v, k.removeprefix("kind:")) for k, v in per_press.items() if k.startswith("kind:")),
        reverse=True,
    )
    return (
        ", ".join(counts),
        ", ".join(f"{value:.2f} {kind}" for value, kind in kinds if value >= 0.01),
    )


async def drive(
    client: BenchClient,
    run: Run,
    pids: dict[str, int],
    options: Options,
    players: list[Any],
    counts: Path | None = None,
) -> Result:
    """Run the players (coroutine factories taking ``until``), then measure the window.

    ``counts``: the folder where the bots (``bot``, ``worker …``) started under
    bench/counted.py write their statement and commit counts.
    """
    bots = [pid for name, pid in pids.items() if name.startswith("worker ")] or [pids["bot"]]
    loop = asyncio.get_running_loop()
    began = loop.time()
    until = began + options.warmup + options.seconds
    tasks = [asyncio.ensure_future(player(until)) for player in players]
    try:
        await asyncio.sleep(options.warmup)
        counts_before = await database_counts(bots, counts)
        start, cpu_before = await client.now(), {k: cpu_seconds(v) for k, v in pids.items()}
        driver_before = time.process_time()
        profiler = await start_profiler(run.label, pids["bot"], options)
        await asyncio.sleep(max(0.0, until - loop.time()))
        if profiler is not None:
            await profiler.wait()
        stop, cpu_after = await client.now(), {k: cpu_seconds(v) for k, v in pids.items()}
        driver_after = time.process_time()
        counts_after = await database_counts(bots, counts)
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    seconds = stop - start
    cpu = {name: (cpu_after[name] - cpu_before[name]) / seconds for name in pids}
    cpu["driver"] = (driver_after - driver_before) / seconds
    presses, flip_ms, snap_ms, longest_ms = await measure(
        client, run, start, stop, options.tie_window_ms / 1000
    )
    database = {
        name: (counts_after[name] - counts_before.get(name, 0)) / max(presses, 1)
        for name in counts_after
    }
    return Result(
        run.label,
        seconds,
        presses,
        flip_ms,
        snap_ms,
        longest_ms,
        cpu,
        run.errors,
        run.games_started,
        run.budget_wait_s,
        database,
    )


async def start_profiler(
    label: str, pid: int, options: Options
) -> asyncio.subprocess.Process | None:
    """py-spy sampling the bot for the measured window (py-spy from PATH or $PY_SPY)."""
    if options.profile is None:
        return None
    options.profile.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"\W+", "-", label).strip("-")
    output = options.profile / f"{name}.txt"
    args = [os.environ.get("PY_SPY", "py-spy"), "record", "--pid", str(pid), "--format", "raw"]
    args += ["--duration", str(max(1, int(options.seconds))), "--output", str(output)]
    return await start_child(args, options.profile / f"{name}.py-spy.log")


async def bare_run(workdir: Path, options: Options, transport: str) -> Result:
    run = Run(BARE_LABELS[transport])
    async with emulator(workdir) as (client, url, emulator_pid):
        token = (await client.bot())["token"]
        args = [PYTHON, str(BENCH / "bare_bot.py"), url, token, "--transport", transport]
        log = workdir / f"bare_bot_{transport}.log"
        async with bot_process(client, args, log) as bot_pid:
            loops = []
            for number in range(options.games):
                user = int((await client.create_user(f"Presser {number}"))["id"])
                chat = await client.create_chat("group", members=[user], admins=[user])
                chat_id = int(chat["id"])
                await client.send_command(chat_id, user, "start")
                message = await client.wait_message(chat_id, 0)
                loops.append(
                    lambda until, c=chat_id, u=user, m=message.message_id: press_loop(
                        client, c, u, m, run, until
                    )
                )
            pids = {"bot": bot_pid, "emulator": emulator_pid}
            return await drive(client, run, pids, options, loops)


async def full_run(label: str, database_url: str, workdir: Path, options: Options) -> Result:
    run = Run(label)
    async with emulator(workdir) as (client, url, emulator_pid):
        env = {
            "TELESNAP_TOKEN": (await client.bot())["token"],
            "TELESNAP_API_URL": url,
            "TELESNAP_DATABASE_URL": database_url,
            "TELESNAP_SHUFFLE_SEED": SHUFFLE_SEED,
            "TELESNAP_FLOOD_CONTROL": "off",
            "TELESNAP_LOG_LEVEL": "WARNING",
            **counted_env(workdir, options),
        }
        args = [*COUNTED, "run"]
        log = workdir / f"bot-{label.split()[-1].lower()}.log"
        async with bot_process(client, args, log, env) as bot_pid:
            tables = [
                await open_table(client, number, options.tie_window_ms)
                for number in range(options.games)
            ]
            rngs = [random.Random(options.seed * 1000 + number) for number in range(options.games)]
            players = [
                lambda until, t=table, r=rng: play(t, run, until, r)
                for table, rng in zip(tables, rngs, strict=True)
            ]
            pids = {"bot": bot_pid, "emulator": emulator_pid}
            result = await drive(client, run, pids, options, players, workdir / "counts")
            violations = await client.violations()
            if violations:
                print(f"  {label}: {len(violations)} Bot API violations", file=sys.stderr)
            return result


@contextlib.asynccontextmanager
async def fresh_postgres(url: str) -> AsyncIterator[str]:
    """Create the database telesnap_bench_<pid> next to ``url``'s; drop it afterwards."""
    from sqlalchemy import text
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    base = make_url(normalize_database_url(url))
    if base.host not in LOOPBACK_HOSTS:
        raise SystemExit(f"--postgres-url must point at 127.0.0.1, not {base.host!r}")
    name = f"telesnap_bench_{os.getpid()}"
    admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            await connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        async with admin.connect() as connection:
            await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


# -- the report -------------------------------------------------------------------------


def fmt(value: float, digits: int = 1) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def report(results: list[Result], options: Options) -> bool:
    bare, bare_aiohttp = results[0], results[1]
    print(
        f"\n{options.games} games (3 players each), {options.seconds:g} s measured after "
        f"{options.warmup:g} s warm-up, tie window {options.tie_window_ms} ms, "
        f"flood control off; latencies in ms (p50 / p99)\n"
    )
    header = (
        f"{'run':<22}{'presses/s':>10}{'vs bare':>9}{'vs aiohttp':>11}{'presses':>9}"
        f"{'flip p50/p99':>17}{'snap p50/p99':>17}{'longest':>9}   cpu bot/emulator/driver"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        ratio = result.rate / bare.rate
        ratio_aiohttp = result.rate / bare_aiohttp.rate
        flips = f"{fmt(percentile(result.flip_ms, 0.5))} / {fmt(percentile(result.flip_ms, 0.99))}"
        snaps = f"{fmt(percentile(result.snap_ms, 0.5))} / {fmt(percentile(result.snap_ms, 0.99))}"
        cpu = "/".join(f"{result.cpu[name] * 100:.0f}%" for name in ("bot", "emulator", "driver"))
        print(
            f"{result.label:<22}{result.rate:>10.1f}{ratio:>8.0%} {ratio_aiohttp:>10.0%} "
            f"{result.presses:>9}"
            f"{flips:>17}{snaps:>17}{fmt(result.longest_wait_ms, 0):>9}   {cpu}"
        )
    extra = [
        f"{r.label}: {r.games_started} games started, {len(r.snap_ms)} snap presses"
        + (f", {r.errors} presses refused or unanswered in {WAIT_S:g} s" if r.errors else "")
        + (
            f"; its players waited {r.budget_wait_s:.1f} s in all to keep within the bot's"
            f" press budget ({PRESS_BUDGET} each)"
            if r.budget_wait_s
            else ""
        )
        for r in results[2:]
    ]
    print("\n" + "\n".join(extra))
    for result in results[2:]:
        if result.database:
            work, kinds = database_work(result.database)
            print(f"{result.label}, per press in the measured window: {work}")
            print(f"  statements by kind: {kinds}")
    goals: list[tuple[str, bool]] = []
    cpu_per_press = bare_aiohttp.cpu["bot"] / bare_aiohttp.rate
    for result in results[2:]:
        goal = GOAL_RATIOS.get(result.label)
        if goal is not None:
            ratio = result.rate / bare_aiohttp.rate
            goals.append(
                (
                    f"{result.label} reaches {goal:.0%} of the bare aiohttp bot's presses/s: "
                    f"{ratio:.0%}",
                    ratio >= goal,
                )
            )
        if result.label == "full bot, SQLite":
            cpu = (result.cpu["bot"] / result.rate) / cpu_per_press
            goals.append(
                (
                    f"CPU per press at most {GOAL_CPU_RATIO:g}x the bare aiohttp bot's: {cpu:.1f}x",
                    cpu <= GOAL_CPU_RATIO,
                )
            )
            commits = result.database.get("commits")
            statements = result.database.get("statements")
            if commits is not None and statements is not None:
                goals.append(
                    (
                        f"at most {GOAL_COMMITS:g} commits and {GOAL_STATEMENTS:g} statements per "
                        f"press on SQLite: {commits:.1f} and {statements:.1f}",
                        commits <= GOAL_COMMITS and statements <= GOAL_STATEMENTS,
                    )
                )
            p99 = percentile(result.snap_ms, 0.99)
            goals.append(
                (
                    f"snap p99 under {SNAP_P99_GOAL_MS:g} ms on SQLite: {fmt(p99)} ms",
                    p99 < SNAP_P99_GOAL_MS,
                )
            )
    for text, reached in goals:
        print(f"goal: {text}, {'met' if reached else 'NOT met'}")
    return all(reached for _, reached in goals)


async def bench(options: Options, postgres_url: str | None) -> bool:
    with tempfile.TemporaryDirectory(prefix="telesnap-bench-") as tmp:
        workdir = Path(tmp)
        results = []
        for transport, label in BARE_LABELS.items():
            print(f"{label}: {options.games} chats ...", file=sys.stderr)
            results.append(await bare_run(workdir, options, transport))
        print("full bot on SQLite ...", file=sys.stderr)
        sqlite_url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
        results.append(await full_run("full bot, SQLite", sqlite_url, workdir, options))
        if postgres_url:
            print("full bot on PostgreSQL ...", file=sys.stderr)
            async with fresh_postgres(postgres_url) as database_url:
                results.append(
                    await full_run("full bot, PostgreSQL", database_url, workdir, options)
                )
        return report(results, options)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="games (chats) played at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--tie-window", type=int, default=100, metavar="MS", help="tie window")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulated players")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="sample each bot with py-spy during the measured window; collapsed stacks to DIR",
    )
    parser.add_argument(
        "--cprofile",
        type=Path,
        metavar="DIR",
        help="profile each full bot with cProfile during the measured window; <pid>.prof to DIR",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("TELESNAP_BENCH_POSTGRES_URL"),
        help="a PostgreSQL server on 127.0.0.1 (default: $TELESNAP_BENCH_POSTGRES_URL)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="instead: the full bot as 1 … N webhook workers behind nginx, on PostgreSQL "
        "(bench/workers.py)",
    )
    args = parser.parse_args()
    options = Options(
        args.games,
        args.seconds,
        args.warmup,
        args.tie_window,
        args.seed,
        args.profile,
        args.cprofile,
    )
    if args.workers:
        import workers

        return workers.main(sys.modules[__name__], args.workers, options, args.postgres_url)
    # The whole benchmark is bounded: four runs, each with its start-up and wind-down.
    limit = 4 * (options.warmup + options.seconds + 2 * START_S + WAIT_S)
    try:
        met = asyncio.run(asyncio.wait_for(bench(options, args.postgres_url), limit))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        kill_children()
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
