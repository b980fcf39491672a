"""A rolling restart stops a worker only while every other one is up to take its updates."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from telesnap.app import Webhook
from telesnap.cli.workers import Supervisor, WorkerSpec, _Worker, worker_specs
from telesnap.config import ConfigError


async def test_a_rolling_restart_waits_for_a_worker_still_coming_back_from_a_crash() -> None:
    """Worker 1 crashed and is restarting as SIGHUP comes: worker 0 must keep serving."""
    supervisor = Supervisor(
        worker_specs(Webhook("https://x/t", "127.0.0.1", 8443, "s"), 2, resume=False)
    )
    up = {0: asyncio.Event(), 1: asyncio.Event()}
    up[0].set()
    stopped: list[int] = []

    # The seams the supervisor runs the processes through (the multiworker tests run the real ones).
    async def ready(worker: _Worker) -> bool:
        await up[worker.spec.number].wait()
        return True

    async def stop(worker: _Worker) -> None:
        stopped.append(worker.spec.number)
        worker.started.set()  # its keeper starts it again at once

    supervisor._wait_until_ready = ready  # type: ignore[method-assign]
    supervisor._stop = stop  # type: ignore[method-assign]
    rolling = asyncio.create_task(supervisor._rolling_restart())
    for _ in range(20):
        await asyncio.sleep(0)
    assert stopped == [], "worker 0 is the only one up: it is not stopped"
    up[1].set()
    await asyncio.wait_for(rolling, 5)
    assert stopped == [0, 1]


@dataclass(frozen=True)
class CrashesThenIsRevoked(WorkerSpec):
    """A worker that crashes (exit 1), then meets a database away at its restart (exit 2, as
    for settings it cannot use), then runs until its token is revoked (exit 3)."""

    runs: Path = Path()

    def command(self) -> list[str]:
        script = (
            "import pathlib, sys; runs = pathlib.Path(sys.argv[1]);"
            " n = len(runs.read_text()) if runs.exists() else 0; runs.write_text('x' * (n + 1));"
            " sys.exit([1, 2, 3][min(n, 2)])"
        )
        return [sys.executable, "-c", script, str(self.runs)]


async def test_a_worker_whose_token_is_revoked_after_a_restart_stops_them_all(
    tmp_path: Path,
) -> None:
    """A revoked token stays revoked: restarting for ever would hide it from whatever runs the
    supervisor. A restart refused for its settings is tried again (a database away a while)."""
    (spec,) = worker_specs(Webhook("https://x/t", "127.0.0.1", 8443, "s"), 1, resume=False)
    runs = tmp_path / "runs"
    supervisor = Supervisor([CrashesThenIsRevoked(spec.number, spec.webhook, False, runs)])
    with pytest.raises(ConfigError, match=r"worker 0 .* refused its settings"):
        await asyncio.wait_for(supervisor.run(), 30)
    assert runs.read_text() == "xxx", "restarted after its crash and its refused restart only"
