"""A rolling restart stops a worker only while every other one is up to take its updates."""

from __future__ import annotations

import asyncio

from telesnap.app import Webhook
from telesnap.cli.workers import Supervisor, _Worker, worker_specs


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
