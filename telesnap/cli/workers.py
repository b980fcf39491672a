"""``telesnap run --workers N``: N webhook workers on consecutive ports, kept running.

Each worker is a ``telesnap run`` process of its own behind a reverse proxy. Separate ports,
not one shared with ``SO_REUSEPORT``: the proxy sees each worker, so it can send a request to
the next when one refuses (a restarting worker loses no request) and health-check each; with a
shared port the kernel hands connections to a closing worker and resets its accept queue.

Every worker is started alike: only a cold start resumes the games (see
:mod:`telesnap.coordination`), so a restarted worker, a rolling restart and the supervisors of
other hosts need nothing special.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace

import aiohttp

from ..app import Webhook
from ..config import (
    WEBHOOK_SECRET_FILE_VARIABLE,
    WEBHOOK_SECRET_VARIABLE,
    ConfigError,
    TokenRevokedError,
)
from ..support.retry import Backoff

__all__ = ["Supervisor", "WorkerSpec", "worker_specs"]

logger = logging.getLogger(__name__)

RESTART_DELAY_S = 1.0
RESTART_DELAY_MAX_S = 30.0
STABLE_AFTER_S = 60.0
"""A worker that ran this long before it died is restarted after the first delay again."""
DRAIN_TIMEOUT_S = 30.0
"""How long a worker may take to drain after SIGTERM before it is killed."""
READY_TIMEOUT_S = 60.0
"""How long a rolling restart waits for a restarted worker's ``/ready``."""
SETTINGS_REFUSED = 2
"""The exit code of a ``telesnap run`` that cannot use its settings (``telesnap.cli.main``)."""
TOKEN_REVOKED = TokenRevokedError.exit_code
"""The exit code of a ``telesnap run`` whose token was refused while it ran."""


@dataclass(frozen=True)
class WorkerSpec:
    """One worker: its number, its port and how it is started."""

    number: int
    webhook: Webhook
    resume: bool
    """False: started with ``--no-resume`` (it never resumes, even on a cold start)."""

    def command(self) -> list[str]:
        """The ``telesnap run`` command line of this worker."""
        arguments = [
            sys.executable,
            "-m",
            "telesnap",
            "run",
            "--webhook-url",
            self.webhook.url,
            "--listen",
            f"{self.webhook.host}:{self.webhook.port}",
        ]
        return arguments if self.resume else [*arguments, "--no-resume"]

    def environment(self) -> dict[str, str]:
        """The worker's environment: the supervisor's, with the webhook secret.

        The secret goes here, not on the command line, which every user can read (``ps``).
        """
        # A blank _FILE wins over a .env file's, which would clash with the secret given.
        return {
            **os.environ,
            WEBHOOK_SECRET_VARIABLE: self.webhook.secret,
            WEBHOOK_SECRET_FILE_VARIABLE: "",
        }

    @property
    def ready_url(self) -> str:
        """Where this worker answers ``/ready``."""
        host = self.webhook.host
        if host in {"0.0.0.0", "::", ""}:
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.webhook.port}/ready"


def worker_specs(webhook: Webhook, workers: int, *, resume: bool) -> list[WorkerSpec]:
    """The workers of ``--workers``: ports from ``webhook.port`` on, all started alike.

    >>> specs = worker_specs(Webhook("https://x/t", "127.0.0.1", 8443, "s"), 3, resume=True)
    >>> [(s.webhook.port, s.resume) for s in specs]
    [(8443, True), (8444, True), (8445, True)]
    """
    return [
        WorkerSpec(number, replace(webhook, port=webhook.port + number), resume)
        for number in range(workers)
    ]


@dataclass(eq=False)
class _Worker:
    spec: WorkerSpec
    process: asyncio.subprocess.Process | None = None
    started_at: float = 0.0
    restart_backoff: Backoff = field(
        default_factory=lambda: Backoff(RESTART_DELAY_S, RESTART_DELAY_MAX_S)
    )
    starts: int = 0
    restarting: bool = False
    started: asyncio.Event = field(default_factory=asyncio.Event)


class Supervisor:
    """Starts the workers, restarts a dead one, stops them all, restarts them one by one."""

    def __init__(self, specs: Sequence[WorkerSpec]) -> None:
        """Prepare to run ``specs`` (see :func:`worker_specs`)."""
        self._workers = [_Worker(spec) for spec in specs]
        self._stopping = asyncio.Event()
        self._rolling: asyncio.Task[None] | None = None
        self._failed = False
        self._refused: _Worker | None = None

    async def run(self) -> bool:
        """Run the workers until SIGTERM or SIGINT; SIGHUP restarts them one at a time.

        Return False if the supervisor itself failed (a worker could not be started). A worker
        whose first run refuses its settings (exit code 2), or whose token the Bot API refused
        while it ran (exit code 3), stops them all: raise :class:`ConfigError`.
        """
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._stopping.set)
        loop.add_signal_handler(signal.SIGHUP, self._roll)
        watchers = [asyncio.create_task(self._keep_running(worker)) for worker in self._workers]
        try:
            await self._stopping.wait()
            count = len(self._workers)
            logger.info("stopping %d worker%s", count, "" if count == 1 else "s")
        finally:
            if self._rolling is not None:
                self._rolling.cancel()
            await asyncio.gather(*(self._stop(worker) for worker in self._workers))
            for watcher in watchers:
                watcher.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(signum)
        logger.info("all workers stopped")
        if self._refused is not None:
            spec = self._refused.spec
            raise ConfigError(
                f"worker {spec.number} (port {spec.webhook.port}) stopped: it refused its settings"
                " (the line above says why); every worker is stopped"
            )
        return not self._failed

    async def _keep_running(self, worker: _Worker) -> None:
        try:
            await self._keep_one_running(worker)
        except Exception:
            logger.exception("worker %d: could not be kept running; stopping", worker.spec.number)
            self._failed = True
            self._stopping.set()

    async def _keep_one_running(self, worker: _Worker) -> None:
        while not self._stopping.is_set():
            await self._start(worker)
            assert worker.process is not None
            code = await worker.process.wait()
            if self._stopping.is_set():
                return
            # At its first run, never ready yet: the settings are wrong, and would be again. A
            # later start may meet a database away for a while; a token revoked stops all.
            if code == TOKEN_REVOKED or (code == SETTINGS_REFUSED and worker.starts == 1):
                self._refused = worker
                self._stopping.set()
                return
            if worker.restarting:
                continue  # a rolling restart stopped it on purpose: start it again now
            ran_s = time.monotonic() - worker.started_at
            if ran_s >= STABLE_AFTER_S:
                worker.restart_backoff.reset()
            delay_s = worker.restart_backoff.next()
            logger.error(
                "worker %d (port %d) exited with code %s after %.0f s; restarting in %.0f s",
                worker.spec.number,
                worker.spec.webhook.port,
                code,
                ran_s,
                delay_s,
            )
            with suppress(TimeoutError):
                async with asyncio.timeout(delay_s):
                    await self._stopping.wait()

    async def _start(self, worker: _Worker) -> None:
        worker.restarting = False
        worker.process = await asyncio.create_subprocess_exec(
            *worker.spec.command(), env=worker.spec.environment()
        )
        worker.started_at = time.monotonic()
        worker.starts += 1
        worker.started.set()
        logger.info(
            "worker %d started on port %d (pid %d)",
            worker.spec.number,
            worker.spec.webhook.port,
            worker.process.pid,
        )

    async def _stop(self, worker: _Worker) -> None:
        process = worker.process
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            async with asyncio.timeout(DRAIN_TIMEOUT_S):
                await process.wait()
        except TimeoutError:
            logger.error(
                "worker %d (pid %d) did not stop within %.0f s of SIGTERM; killing it",
                worker.spec.number,
                process.pid,
                DRAIN_TIMEOUT_S,
            )
            process.kill()
            await process.wait()

    def _roll(self) -> None:
        if self._rolling is not None and not self._rolling.done():
            logger.warning("a rolling restart is already under way")
            return
        self._rolling = asyncio.create_task(self._rolling_restart())

    async def _rolling_restart(self) -> None:
        logger.info("rolling restart of %d workers", len(self._workers))
        for worker in self._workers:
            if self._stopping.is_set():
                return
            # The others take the updates while this one restarts: each must be up first (one
            # may be restarting after a crash, or still starting).
            others = [other for other in self._workers if other is not worker]
            readiness = await asyncio.gather(*(self._wait_until_ready(o) for o in others))
            if not all(readiness):
                down = [o.spec.number for o, up in zip(others, readiness, strict=True) if not up]
                late = ", ".join(map(str, down))
                logger.error(
                    "rolling restart stopped before worker %d: worker(s) %s not ready after %.0f s",
                    worker.spec.number,
                    late,
                    READY_TIMEOUT_S,
                )
                return
            worker.restarting = True
            worker.started.clear()
            await self._stop(worker)
            await worker.started.wait()
            if not await self._wait_until_ready(worker):
                logger.error(
                    "rolling restart stopped: worker %d (port %d) is not ready after %.0f s",
                    worker.spec.number,
                    worker.spec.webhook.port,
                    READY_TIMEOUT_S,
                )
                return
        logger.info("rolling restart done")

    async def _wait_until_ready(self, worker: _Worker) -> bool:
        deadline = time.monotonic() + READY_TIMEOUT_S
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                try:
                    timeout = aiohttp.ClientTimeout(total=5)
                    async with session.get(worker.spec.ready_url, timeout=timeout) as reply:
                        if reply.status == 200:
                            return True
                except (aiohttp.ClientError, TimeoutError):
                    pass  # not listening yet
                await asyncio.sleep(0.5)  # polling a starting process, with a deadline
        return False
