"""Several workers behind nginx, as the README's production recipe runs them (no kills here)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import aiohttp

from telesnap.storage.migrate import current_revision
from tests.multiworker.play import (
    PlayLog,
    exactly_once_problems,
    history_problems,
    open_table,
    play_fast,
    stored_histories,
)
from tests.multiworker.processes import (
    SECRET,
    TOKEN,
    Process,
    _answers,
    _poll,
    deployment,
    free_ports,
    routed_updates,
    worker_environment,
)
from tests.storage.migration_checks import head_revision


async def get_json(url: str) -> tuple[int, dict[str, object]]:
    async with aiohttp.ClientSession() as session, session.get(url) as reply:
        return reply.status, await reply.json()


async def test_three_workers_start_at_once_then_one_game_is_played_across_all_of_them(
    tmp_path: Path, postgres_url: str
) -> None:
    async with deployment(tmp_path, postgres_url, workers=3) as running:
        # Started together on an empty database: one migrated, the others waited.
        assert await current_revision(postgres_url) == head_revision()
        for worker in running.workers:
            base = f"http://127.0.0.1:{worker.port}"
            assert await get_json(f"{base}/health") == (200, {"alive": True})
            assert await get_json(f"{base}/ready") == (200, {"ready": True})

        table = await open_table(running.client, postgres_url, ["Ann", "Bob", "Cid"])
        await table.open_and_start(["Ann", "Bob", "Cid"])
        log = PlayLog()
        stop = asyncio.Event()
        player = asyncio.create_task(play_fast(table, stop, log, seed=1))
        await running.client.wait_for(
            lambda: _enough(log, 30), timeout=120, what="30 presses played"
        )
        stop.set()
        await player
        await running.client.wait_until_idle(quiet=0.5, timeout=30)

        assert log.stalls == []
        routes = routed_updates(running.access_log)
        workers_used = {address for tries in routes.values() for address in tries}
        assert len(workers_used) == 3, f"nginx spread the updates over {workers_used}"
        histories = await stored_histories(postgres_url)
        assert await exactly_once_problems(running.client, log, histories) == []
        assert await history_problems(running.client, histories) == []
        assert await running.client.violations() == []

        # The Bot API gone: every worker still lives, none is ready, and each says why.
        await running.emulator.kill()
        for worker in running.workers:
            status, body = await get_json(worker.ready_url)
            assert status == 503
            assert [p.split(":")[0] for p in body["problems"]] == ["bot api"]  # type: ignore[union-attr]
            assert (await get_json(f"http://127.0.0.1:{worker.port}/health"))[0] == 200


async def _enough(log: PlayLog, presses: int) -> bool | None:
    return True if len(log.presses) >= presses else None


COLD_START = "cold start: no other worker is alive"
"""What a worker logs when it resumes the games (nobody else was alive)."""


def worker_pids(log: str) -> dict[int, list[int]]:
    """By worker number, the pids the supervisor started, in order."""
    pids: dict[int, list[int]] = {}
    for number, pid in re.findall(r"worker (\d+) started on port \d+ \(pid (\d+)\)", log):
        pids.setdefault(int(number), []).append(int(pid))
    return pids


async def test_telesnap_run_workers_keeps_n_workers_running_and_restarts_them_one_by_one(
    tmp_path: Path, postgres_url: str
) -> None:
    emulator = Process(
        "emulator",
        [
            sys.executable,
            "-m",
            "telesnap",
            "emulator",
            "--port",
            str(port := free_ports(1)),
        ],
        tmp_path / "emulator.log",
        cwd=tmp_path,
        forked=True,
    )
    await emulator.start()
    api = f"http://127.0.0.1:{port}"
    await _poll("the emulator", lambda: _answers(f"{api}/bot{TOKEN}/getMe"), emulator)
    first = free_ports(3)
    supervisor = Process(
        "supervisor",
        [
            sys.executable, "-m", "telesnap", "run",
            "--webhook-url", f"http://127.0.0.1:{first}/telegram",
            "--listen", f"127.0.0.1:{first}",
            "--workers", "3",
        ],
        tmp_path / "supervisor.log",
        worker_environment(api, postgres_url, flood_control=True),
        cwd=tmp_path,
    )  # fmt: skip
    ready = [f"http://127.0.0.1:{p}/ready" for p in range(first, first + 3)]

    async def all_ready() -> bool:
        return all(await asyncio.gather(*(_answers(url) for url in ready)))

    try:
        await supervisor.start()
        await _poll("three workers", all_ready, supervisor)
        started = worker_pids(supervisor.log_text())
        assert sorted(started) == [0, 1, 2]
        assert not any("--no-resume" in _command_of(pids[0]) for pids in started.values())
        assert not any(SECRET in _command_of(pids[0]) for pids in started.values())
        assert supervisor.log_text().count(COLD_START) == 1, "three started at once: one resumes"

        # A worker killed with -9 is started again, and joins the others without resuming.
        killed = started[1][0]
        await asyncio.to_thread(_kill, killed)

        async def replaced() -> bool:
            return len(worker_pids(supervisor.log_text()).get(1, [])) == 2 and await all_ready()

        await _poll("worker 1 again", replaced, supervisor)
        assert "worker 1 (port" in supervisor.log_text()
        assert "--no-resume" not in _command_of(worker_pids(supervisor.log_text())[1][1])
        assert supervisor.log_text().count(COLD_START) == 1, "it joined the running two"

        # SIGHUP: every worker is restarted, one at a time, each ready before the next.
        before = {n: pids[-1] for n, pids in worker_pids(supervisor.log_text()).items()}
        assert supervisor.process is not None
        supervisor.process.send_signal(signal.SIGHUP)

        async def rolled() -> bool:
            return "rolling restart done" in supervisor.log_text()

        await _poll("the rolling restart", rolled, supervisor)
        after = {n: pids[-1] for n, pids in worker_pids(supervisor.log_text()).items()}
        assert all(after[n] != before[n] for n in range(3)), (before, after)
        assert supervisor.log_text().count(COLD_START) == 1, "a rolling restart never resumes"
        assert await all_ready()

        # SIGTERM: every worker drains and exits, then the supervisor.
        assert await supervisor.terminate() == 0
        assert "all workers stopped" in supervisor.log_text()
        assert not any(await asyncio.gather(*(_answers(url) for url in ready)))
    finally:
        if supervisor.returncode is None and supervisor.process is not None:
            await supervisor.terminate()
        await emulator.terminate()
        supervisor.close()
        emulator.close()


def _command_of(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


async def test_workers_refuse_sqlite_and_polling(tmp_path: Path) -> None:
    environment = worker_environment(
        "http://127.0.0.1:9", f"sqlite:///{tmp_path / 'x.db'}", flood_control=True
    )
    for arguments, expected in [
        (["--workers", "2"], "--workers needs --webhook-url"),
        (
            ["--webhook-url", "http://x/t", "--workers", "2"],
            "--workers above 1 needs PostgreSQL",
        ),
    ]:
        process = Process(
            "refused",
            [sys.executable, "-m", "telesnap", "run", *arguments],
            tmp_path / "refused.log",
            environment,
            cwd=tmp_path,
            forked=True,
        )
        await process.start()
        assert process.process is not None
        assert await process.process.wait() == 2
        assert expected in process.log_text()
        process.close()
