"""`telesnap sandbox` as people run it: where it is, the page, and a clean stop on Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_it_starts_says_it_listens_on_this_machine_only_and_stops_on_ctrl_c(
    tmp_path: Path,
) -> None:
    port = free_port()
    database = tmp_path / "games.db"
    environment = {**os.environ, "TELESNAP_LOG_LEVEL": "WARNING"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "telesnap",
        "sandbox",
        "--port",
        str(port),
        "--database-url",
        f"sqlite:///{database}",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    try:
        lines = []
        async with asyncio.timeout(60):
            while not lines or "Ctrl-C stops it" not in lines[-1]:
                line = (await process.stdout.readline()).decode()
                assert line, "the sandbox ended before it was ready"
                lines.append(line.rstrip())
        assert lines[0] == f"telesnap sandbox: open http://127.0.0.1:{port}/ in a browser"
        assert any("listening on 127.0.0.1 only" in line for line in lines)
        assert any(str(database) in line for line in lines)
        assert (
            f"  replay one: telesnap replay --game ID --database-url sqlite+aiosqlite:///{database}"
            in lines
        )
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/") as response,
        ):
            assert response.status == 200
            assert "telesnap sandbox" in await response.text()
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            rest, errors = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, errors.decode()
    assert rest.decode().strip().endswith("telesnap sandbox: stopped")
    assert "Traceback" not in errors.decode()
    assert (database.with_name("games.db.sandbox.json")).exists()
