"""Real processes for the multi-worker acceptance runs: emulator, nginx, workers, a database.

Everything runs as it would in production, on loopback and plain HTTP (TLS is
the proxy's business and changes nothing the tests look at): ``telesnap
emulator`` delivering webhooks to a real nginx (its configuration generated in a
temporary folder, run in the foreground with its own pid and log files) in front
of ``telesnap run --webhook-url …`` workers on a PostgreSQL database of the
test's own (created with a unique name, dropped after). The emulator and the
workers are forked by the bot parent (:class:`BotParent`), which imported
telesnap once: each a process of its own, killed as any process is.

Readiness is awaited by polling with a deadline (the processes say nothing
else); nothing here sleeps to let time pass.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aiohttp
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

import telesnap
from telesnap.config import normalize_database_url
from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.guard import new_key

EMULATOR_KEY = new_key()
"""The key the emulators of these tests are started with (their control API needs it)."""

TOKEN = "123456789:TEST-telesnap-emulator-token"
SECRET = "multiworker-secret-of-at-least-32-characters"
WEBHOOK_PATH = "/telegram"
START_DEADLINE_S = 60.0
NGINX = os.environ.get("TELESNAP_NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
POSTGRES_URL_VARIABLE = "TELESNAP_TEST_POSTGRES_URL"


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports that are all free now.

    They are taken below the ephemeral range: there, no client socket of a test
    running alongside takes a worker's port while the worker restarts.
    """
    ephemeral = Path("/proc/sys/net/ipv4/ip_local_port_range")
    lowest = int(ephemeral.read_text().split()[0]) if ephemeral.exists() else 32768
    chooser = random.Random()
    for _ in range(50):
        first = chooser.randrange(10_000, lowest - count)
        with ExitStack() as stack:
            try:
                for port in range(first, first + count):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return first
    raise AssertionError("no consecutive free ports")


def free_port() -> int:
    """A port nobody listens on now (see :func:`free_ports`)."""
    return free_ports(1)


BOT_PARENT = Path(__file__).resolve().with_name("bot_parent.py")


class ForkedProcess:
    """A ``telesnap`` process forked by the bot parent: the parts of asyncio's Process used here.

    Its signals go through the parent, which reaps its children itself, so a signal never
    reaches another process that took a reaped child's pid.
    """

    def __init__(self, parent: BotParent, pid: int) -> None:
        self._parent = parent
        self.pid = pid
        self.returncode: int | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[int]]] = []

    def _exited(self, code: int) -> None:  # on the parent's reader thread
        self.returncode = code
        for loop, future in self._waiters:
            with suppress(RuntimeError):  # that loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_set_result, future, code)
        self._waiters.clear()

    def send_signal(self, number: int) -> None:
        """Send signal ``number`` (a no-op once it has exited)."""
        self._parent.request({"op": "signal", "pid": self.pid, "signal": int(number)})

    def kill(self) -> None:
        """SIGKILL."""
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        """SIGTERM."""
        self.send_signal(signal.SIGTERM)

    async def wait(self) -> int:
        """Wait until it has exited and was reaped; its exit code."""
        with self._parent.lock:
            if self.returncode is None:
                future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
                self._waiters.append((asyncio.get_running_loop(), future))
            else:
                return self.returncode
        return await future


def _set_result(future: asyncio.Future[int], code: int) -> None:
    if not future.done():
        future.set_result(code)


class BotParent:
    """The process that forks ``telesnap`` processes (tests/multiworker/bot_parent.py).

    One per test process, started at its first use and stopped when the tests end. It
    is driven from whatever event loop a test runs (each test has its own), so its
    replies are read on a thread of their own.
    """

    _running: BotParent | None = None

    def __init__(self) -> None:
        self.lock = threading.Lock()
        source = str(Path(telesnap.__file__).resolve().parent.parent)  # this tree's telesnap
        self._process = subprocess.Popen(
            [sys.executable, "-P", str(BOT_PARENT)],  # -P: not tests/multiworker on sys.path
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")])),
            },
        )
        self._children: dict[int, ForkedProcess] = {}
        self._started: list[ForkedProcess] = []
        self._starting = threading.Lock()
        self._writing = threading.Lock()
        self._started_ready = threading.Condition(self.lock)
        self._reader = threading.Thread(target=self._read, name="bot parent", daemon=True)
        self._reader.start()

    @classmethod
    def get(cls) -> BotParent:
        """The running parent, started now if there is none (or it died)."""
        if cls._running is None or cls._running._process.poll() is not None:
            cls._running = cls()
            atexit.register(cls._running.close)
        return cls._running

    def request(self, message: dict[str, Any]) -> None:
        """Send one request (a line of JSON)."""
        assert self._process.stdin is not None
        with self._writing:
            self._process.stdin.write((json.dumps(message) + "\n").encode())
            self._process.stdin.flush()

    async def start(
        self, command: list[str], log: Path, env: dict[str, str], cwd: Path
    ) -> ForkedProcess:
        """Fork ``telesnap COMMAND``, its output appended to ``log``."""
        return await asyncio.to_thread(self._start, command, log, env, cwd)

    def _start(
        self, command: list[str], log: Path, env: dict[str, str], cwd: Path
    ) -> ForkedProcess:
        message = {"op": "start", "argv": command, "env": env, "cwd": str(cwd), "log": str(log)}
        with self._starting:  # one start at a time: the next reply names its pid
            self.request(message)
            with self.lock:
                while not self._started:
                    if self._process.poll() is not None:
                        code = self._process.returncode
                        raise AssertionError(f"the bot parent exited with {code}")
                    self._started_ready.wait(timeout=1.0)
                return self._started.pop()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            message = json.loads(line)
            with self.lock:
                if message["op"] == "started":
                    child = self._children[message["pid"]] = ForkedProcess(self, message["pid"])
                    self._started.append(child)
                    self._started_ready.notify_all()
                elif message["op"] == "exited":
                    self._children.pop(message["pid"])._exited(message["code"])

    def close(self) -> None:
        """Stop it: it kills the children still running, reaps them, and exits."""
        if self._process.stdin is not None:
            with suppress(OSError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


async def _poll(what: str, probe: Any, process: Process | None = None) -> None:
    """Wait until ``probe()`` is true: a starting process gives no other sign."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_DEADLINE_S
    while not await probe():
        if process is not None and process.returncode is not None:
            raise AssertionError(f"{what} exited with {process.returncode}:\n{process.log_tail()}")
        if loop.time() > deadline:
            tail = process.log_tail() if process is not None else ""
            raise AssertionError(f"{what} not up within {START_DEADLINE_S} s\n{tail}")
        await asyncio.sleep(0.1)  # polling a subprocess for readiness, with a deadline


async def _answers(url: str, status: int = 200) -> bool:
    try:
        timeout = aiohttp.ClientTimeout(total=3)
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as reply:
            return reply.status == status
    except (aiohttp.ClientError, TimeoutError):
        return False


@dataclass(eq=False)
class Process:
    """A child process with its output in a log file (appended to across restarts)."""

    name: str
    command: list[str]
    log_path: Path
    environment: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    forked: bool = False
    """Forked by the bot parent (``command`` is ``python -m telesnap ...``): see BotParent."""
    process: asyncio.subprocess.Process | ForkedProcess | None = None
    kills: int = 0
    _log: IO[bytes] | None = None

    @property
    def returncode(self) -> int | None:
        """The exit code once it has exited (None while it runs or before it started)."""
        return None if self.process is None else self.process.returncode

    @property
    def pid(self) -> int:
        """Its process id."""
        assert self.process is not None
        return self.process.pid

    async def start(self) -> None:
        """Start it (again)."""
        self._log = self._log or self.log_path.open("ab")
        self._log.write(f"\n==== start: {' '.join(self.command)}\n".encode())
        self._log.flush()
        if self.forked:
            assert self.command[:3] == [sys.executable, "-m", "telesnap"], self.command
            self.process = await BotParent.get().start(
                self.command[3:],
                self.log_path,
                {**os.environ, **self.environment},
                self.cwd or Path.cwd(),
            )
            return
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdout=self._log,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **self.environment},
            cwd=self.cwd,
        )

    async def kill(self) -> None:
        """kill -9, and reap it."""
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            self.kills += 1
        if self.process is not None:
            await self.process.wait()

    async def terminate(self, timeout_s: float = 30.0) -> int:
        """SIGTERM, and wait for it to exit (kill -9 after ``timeout_s``); return its code."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(timeout_s):
                    await self.process.wait()
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
                raise AssertionError(f"{self.name} ignored SIGTERM\n{self.log_tail()}") from None
        return self.process.returncode or 0

    def log_tail(self, lines: int = 40) -> str:
        """The end of its log, for a failure message."""
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def log_text(self) -> str:
        """Its whole log so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def close(self) -> None:
        """Close its log file."""
        if self._log is not None:
            self._log.close()
            self._log = None


@dataclass(eq=False)
class Worker(Process):
    """A ``telesnap run`` process; ``port`` is its webhook listener's (None: long polling)."""

    port: int | None = None
    starts: int = 0

    @property
    def ready_url(self) -> str:
        """Its ``/ready`` endpoint."""
        return f"http://127.0.0.1:{self.port}/ready"

    async def start(self) -> None:
        """Start it (it resumes the games only if no other worker is alive)."""
        self.starts += 1
        await super().start()

    async def wait_ready(self) -> None:
        """Wait until it answers ``/ready`` (webhook) or says it is running (polling)."""
        if self.port is not None:
            await _poll(self.name, lambda: _answers(self.ready_url), self)
        else:
            marker = "telesnap is running as"
            count = self.log_text().count(marker)
            wanted = self.starts

            async def running() -> bool:
                return self.log_text().count(marker) >= wanted

            if count < wanted:
                await _poll(self.name, running, self)

    async def restart(self) -> None:
        """Start it again after a kill, and wait until it is ready."""
        await self.start()
        await self.wait_ready()


def worker_environment(api_url: str, database_url: str, *, flood_control: bool) -> dict[str, str]:
    """The TELESNAP_* settings every worker of a test gets."""
    return {
        "TELESNAP_TOKEN": TOKEN,
        "TELESNAP_API_URL": api_url,
        "TELESNAP_DATABASE_URL": database_url,
        "TELESNAP_FLOOD_CONTROL": "on" if flood_control else "off",
        "TELESNAP_LOG_LEVEL": "INFO",
        "TELESNAP_WEBHOOK_SECRET": SECRET,
        "PYTHONUNBUFFERED": "1",
    }


def nginx_config(folder: Path, port: int, upstream_ports: list[int]) -> str:
    """An nginx configuration: plain HTTP on ``port``, round robin over the workers.

    Each request is logged as JSON with the worker that took it and its body, so a
    test can tell which worker an update went to.
    """
    servers = "\n".join(
        f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for p in upstream_ports
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    return f"""{user}daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log notice;
events {{ worker_connections 1024; }}
http {{
  client_body_temp_path {folder}/body;
  proxy_temp_path {folder}/proxy;
  fastcgi_temp_path {folder}/fastcgi;
  uwsgi_temp_path {folder}/uwsgi;
  scgi_temp_path {folder}/scgi;
  log_format updates escape=json
    '{{"upstream":"$upstream_addr","status":"$upstream_status","body":"$request_body"}}';
  access_log {folder}/access.log updates;
  upstream telesnap {{
{servers}
    keepalive 16;
  }}
  server {{
    listen 127.0.0.1:{port};
    client_body_buffer_size 64k;
    location = /nginx-ready {{ return 200; }}
    location {WEBHOOK_PATH} {{
      proxy_pass http://telesnap;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout http_503 non_idempotent;
      proxy_connect_timeout 1s;
      proxy_read_timeout 30s;
    }}
  }}
}}
"""


def routed_updates(access_log: Path) -> dict[int, list[str]]:
    """By update_id, the worker addresses nginx handed the update to (every try)."""
    routes: dict[int, list[str]] = {}
    for line in access_log.read_text().splitlines():
        entry = json.loads(line)
        with suppress(ValueError):
            update = json.loads(entry["body"])
            routes.setdefault(update["update_id"], []).append(entry["upstream"])
    return routes


@dataclass(eq=False)
class Deployment:
    """The emulator, nginx (when there are webhook workers) and the workers of one test."""

    folder: Path
    database_url: str
    emulator: Process
    emulator_url: str
    client: EmulatorClient
    workers: list[Worker]
    nginx: Process | None = None

    @property
    def access_log(self) -> Path:
        """nginx's log of the requests it passed on."""
        return self.folder / "nginx" / "access.log"

    def worker_on(self, address: str) -> Worker:
        """The worker listening on ``127.0.0.1:PORT``."""
        port = int(address.rpartition(":")[2])
        return next(worker for worker in self.workers if worker.port == port)

    def logs(self) -> str:
        """Every process's log tail, for a failure message."""
        parts = [self.emulator, *self.workers, *([self.nginx] if self.nginx else [])]
        return "\n".join(f"--- {p.name}\n{p.log_tail(25)}" for p in parts)


async def _admin(url: str, statement: str) -> None:
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


@asynccontextmanager
async def private_postgres() -> AsyncIterator[str]:
    """A PostgreSQL database of this test's own, with a unique name, dropped after."""
    server = normalize_database_url(os.environ[POSTGRES_URL_VARIABLE], variable="postgres")
    name = f"telesnap_mw_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    await _admin(server, f'CREATE DATABASE "{name}"')
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        await _admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _start_emulator(folder: Path, *, flood_limits: bool) -> tuple[Process, str]:
    port = free_port()
    command = [sys.executable, "-m", "telesnap", "emulator", "--port", str(port)]
    if not flood_limits:
        command.append("--no-flood-limits")
    key_file = folder / "emulator.key"
    key_file.write_text(EMULATOR_KEY, encoding="utf-8")
    command += ["--key-file", str(key_file)]
    emulator = Process("emulator", command, folder / "emulator.log", cwd=folder, forked=True)
    await emulator.start()
    url = f"http://127.0.0.1:{port}"
    await _poll("the emulator", lambda: _answers(f"{url}/_emulator/bot?k={EMULATOR_KEY}"), emulator)
    return emulator, url


@asynccontextmanager
async def deployment(
    folder: Path,
    database_url: str,
    *,
    workers: int = 3,
    webhook: bool = True,
    flood_limits: bool = False,
) -> AsyncIterator[Deployment]:
    """Start the emulator, nginx and ``workers`` workers (all at once); stop them after.

    Every worker is started alike, as ``telesnap run --workers`` does: a start that
    finds no other worker alive resumes the games (a lone worker's every start), the
    others join.
    """
    emulator, emulator_url = await _start_emulator(folder, flood_limits=flood_limits)
    client = EmulatorClient(emulator_url, key=EMULATOR_KEY)
    environment = worker_environment(emulator_url, database_url, flood_control=flood_limits)
    ports = [free_port() for _ in range(workers)] if webhook else [None]
    nginx = None
    started: list[Process] = [emulator]
    try:
        webhook_arguments: list[str] = []
        if webhook:
            nginx_folder = folder / "nginx"
            nginx_folder.mkdir()
            nginx_port = free_port()
            config = nginx_folder / "nginx.conf"
            config.write_text(nginx_config(nginx_folder, nginx_port, [p for p in ports if p]))
            nginx = Process(
                "nginx",
                [NGINX, "-p", str(nginx_folder), "-c", str(config)],
                nginx_folder / "nginx.out",
            )
            await nginx.start()
            started.append(nginx)
            ping = f"http://127.0.0.1:{nginx_port}/nginx-ready"
            await _poll("nginx", lambda: _answers(ping), nginx)
            url = f"http://127.0.0.1:{nginx_port}{WEBHOOK_PATH}"
            webhook_arguments = ["--webhook-url", url]
        pool = []
        for number, port in enumerate(ports):
            listen = ["--listen", f"127.0.0.1:{port}"] if port is not None else []
            worker = Worker(
                f"worker {number}",
                [sys.executable, "-m", "telesnap", "run", *webhook_arguments, *listen],
                folder / f"worker-{number}.log",
                environment,
                cwd=folder,
                forked=True,
                port=port,
            )
            pool.append(worker)
        for worker in pool:
            await worker.start()
            started.append(worker)
        await asyncio.gather(*(worker.wait_ready() for worker in pool))
        yield Deployment(folder, database_url, emulator, emulator_url, client, pool, nginx)
    finally:
        await client.close()
        for process in reversed(started):
            if process.returncode is None and process.process is not None:
                with suppress(AssertionError):
                    await process.terminate(timeout_s=20)
            process.close()
