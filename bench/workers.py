"""``bench/bot.py --workers N``: the full bot as 1, 2, … N webhook workers behind nginx.

Run: .venv/bin/python bench/bot.py --workers 3 --postgres-url postgresql+asyncpg://…

One run per worker count, one after the other, each with its own emulator
(bench/emulator_server.py, flood limits off), a fresh PostgreSQL database, a
real nginx (plain HTTP on loopback, round robin; its configuration generated in
the run's folder) and that many ``telesnap run --webhook-url …`` workers; the
driver plays the games of bench/bot.py through the emulator, which delivers
each chat's updates by webhook through nginx. Reported: presses per second,
flip and snap p50/p99 latencies (as bench/bot.py measures them), and the CPU of
the workers together, of nginx and of the emulator, per second and per press.

On a machine with two cores the figures cannot show scaling (the emulator, the
driver, nginx, PostgreSQL and the workers share them); the CPU per press is
what carries over to a deployment with a host per worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp

SECRET = "bench-secret-of-at-least-32-characters"
NGINX = os.environ.get("TELESNAP_NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"


def free_port() -> int:
    """A port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def nginx_config(folder: Path, port: int, workers: list[int]) -> str:
    """nginx on ``port`` in front of the workers (round robin), logging nothing per request."""
    servers = "\n".join(f"    server 127.0.0.1:{p};" for p in workers)
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "\n".join(
        f"  {kind}_temp_path {folder}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""{user}daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
{temp}
  access_log off;
  upstream telesnap {{
{servers}
    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://telesnap;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
    }}
  }}
}}
"""


async def _wait_ready(
    bench: ModuleType, url: str, process: asyncio.subprocess.Process, log: Path
) -> None:
    """Poll ``url`` until it answers 200 (a starting process gives no other sign)."""
    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"{url}: the process exited:\n{bench.tail(log)}")
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with session.get(url, timeout=aiohttp.ClientTimeout(total=2)) as reply:
                    if reply.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} not ready within 60 s:\n{bench.tail(log)}")


@contextlib.asynccontextmanager
async def deployment(
    bench: ModuleType, workdir: Path, url: str, database_url: str, workers: int, options: Any
) -> AsyncIterator[dict[str, int]]:
    """nginx and ``workers`` workers against the emulator at ``url``; yield their pids."""
    folder = workdir / f"workers-{workers}"
    folder.mkdir()
    nginx_port, ports = free_port(), [free_port() for _ in range(workers)]
    (folder / "nginx.conf").write_text(nginx_config(folder, nginx_port, ports))
    nginx = await bench.start_child(
        [NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")], folder / "nginx.log"
    )
    processes = [nginx]
    try:
        env = {
            "TELESNAP_TOKEN": "123456789:TEST-telesnap-emulator-token",
            "TELESNAP_API_URL": url,
            "TELESNAP_DATABASE_URL": database_url,
            "TELESNAP_SHUFFLE_SEED": bench.SHUFFLE_SEED,
            "TELESNAP_FLOOD_CONTROL": "off",
            "TELESNAP_LOG_LEVEL": "WARNING",
            "TELESNAP_WEBHOOK_SECRET": SECRET,
            **bench.counted_env(workdir, options),
        }
        hook = f"http://127.0.0.1:{nginx_port}/telegram"
        for number, port in enumerate(ports):
            args = [*bench.COUNTED, "run", "--webhook-url", hook]
            args += ["--listen", f"127.0.0.1:{port}"]
            log = folder / f"worker-{number}.log"
            process = await bench.start_child(args, log, env)
            processes.append(process)
            await _wait_ready(bench, f"http://127.0.0.1:{port}/ready", process, log)
        pids = {f"worker {n}": p.pid for n, p in enumerate(processes[1:])}
        yield {**pids, "bot": processes[1].pid, "nginx": nginx.pid}
    finally:
        for process in reversed(processes):
            await bench.stop_child(process)


async def workers_run(
    bench: ModuleType, workers: int, postgres_url: str, workdir: Path, options: Any
) -> Any:
    """One run of bench/bot.py's games against ``workers`` workers behind nginx."""
    label = f"{workers} worker{'s' if workers > 1 else ''}, PostgreSQL"
    run = bench.Run(label)
    async with (
        bench.fresh_postgres(postgres_url) as database_url,
        bench.emulator(workdir) as (client, url, emulator_pid),
        deployment(bench, workdir, url, database_url, workers, options) as pids,
    ):
        tables = [
            await bench.open_table(client, number, options.tie_window_ms)
            for number in range(options.games)
        ]
        rngs = [bench.random.Random(options.seed * 1000 + n) for n in range(options.games)]
        players = [
            lambda until, t=table, r=rng: bench.play(t, run, until, r)
            for table, rng in zip(tables, rngs, strict=True)
        ]
        pids = {**pids, "emulator": emulator_pid}
        before = await database_work(database_url)
        result = await bench.drive(client, run, pids, options, players, workdir / "counts")
        after = await database_work(database_url)
        presses = len(run.flips) + sum(len(race) for race in run.races)
        result.postgres = {k: (after[k] - before[k]) / max(presses, 1) for k in after}
        violations = await client.violations()
        if violations:
            print(f"  {label}: {len(violations)} Bot API violations", file=sys.stderr)
        return result


async def database_work(database_url: str) -> dict[str, int]:
    """PostgreSQL's counters of the bench database: commits, statements' row work."""
    from sqlalchemy import text
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    url = make_url(database_url)
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT pg_stat_clear_snapshot()"))
            row = (
                await connection.execute(
                    text(
                        "SELECT xact_commit, tup_inserted, tup_updated, tup_deleted, "
                        "tup_fetched FROM pg_stat_database WHERE datname = :name"
                    ),
                    {"name": url.database},
                )
            ).one()
    finally:
        await engine.dispose()
    names = ("commits", "inserted", "updated", "deleted", "fetched")
    return dict(zip(names, (int(value) for value in row), strict=True))


def report(bench: ModuleType, results: list[Any], options: Any) -> None:
    """Print one line per worker count: rate, latencies, CPU per second and per press."""
    print(
        f"\n{options.games} games (3 players each), {options.seconds:g} s measured after "
        f"{options.warmup:g} s warm-up, tie window {options.tie_window_ms} ms, flood control "
        "off, webhooks through nginx; latencies in ms (p50 / p99); CPU in % of one core\n"
    )
    header = (
        f"{'run':<24}{'presses/s':>10}{'presses':>9}{'flip p50/p99':>17}{'snap p50/p99':>17}"
        f"{'workers':>9}{'nginx':>7}{'emulator':>10}{'CPU ms/press':>14}"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        fmt, pct = bench.fmt, bench.percentile
        workers_cpu = sum(v for k, v in result.cpu.items() if k.startswith("worker "))
        per_press = (workers_cpu + result.cpu["nginx"]) / result.rate * 1000
        flips = f"{fmt(pct(result.flip_ms, 0.5))} / {fmt(pct(result.flip_ms, 0.99))}"
        snaps = f"{fmt(pct(result.snap_ms, 0.5))} / {fmt(pct(result.snap_ms, 0.99))}"
        print(
            f"{result.label:<24}{result.rate:>10.1f}{result.presses:>9}{flips:>17}{snaps:>17}"
            f"{workers_cpu * 100:>8.0f}%{result.cpu['nginx'] * 100:>6.0f}%"
            f"{result.cpu['emulator'] * 100:>9.0f}%"
            f"{fmt(per_press if result.rate else math.nan, 2):>14}"
        )
    print("CPU ms/press: the workers' and nginx's CPU time per press handled")
    print("\nThe workers' statements and commits per press, in the measured window:")
    for result in results:
        work, kinds = bench.database_work(result.database)
        print(f"  {result.label}: {work}\n    by kind: {kinds}")
    print("\nPostgreSQL per press (whole run, warm-up included; the statistics lag a little):")
    for result in results:
        work = ", ".join(f"{value:.1f} {name}" for name, value in result.postgres.items())
        print(f"  {result.label}: {work}")


async def workers_bench(
    bench: ModuleType, counts: list[int], options: Any, postgres_url: str
) -> bool:
    """Run every worker count in ``counts`` and report them together."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="telesnap-bench-workers-") as tmp:
        results = []
        for workers in counts:
            print(f"{workers} worker(s) behind nginx on PostgreSQL ...", file=sys.stderr)
            results.append(await workers_run(bench, workers, postgres_url, Path(tmp), options))
        report(bench, results, options)
    return True


def main(bench: ModuleType, workers: int, options: Any, postgres_url: str | None) -> int:
    """The ``--workers N`` entry point of bench/bot.py: runs for 1 … N workers."""
    if not postgres_url:
        print("--workers needs --postgres-url (or TELESNAP_BENCH_POSTGRES_URL)", file=sys.stderr)
        return 2
    if not Path(NGINX).exists():
        print(f"--workers needs nginx (apt-get install nginx; or TELESNAP_NGINX): {NGINX}")
        return 2
    counts = list(range(1, workers + 1))
    limit = len(counts) * (options.warmup + options.seconds + 3 * bench.START_S + bench.WAIT_S)
    try:
        asyncio.run(asyncio.wait_for(workers_bench(bench, counts, options, postgres_url), limit))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        bench.kill_children()
    return 0
