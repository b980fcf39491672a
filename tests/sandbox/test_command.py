"""`telesnap sandbox` as people run it: where it is, the page, a clean stop, what it refuses."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
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
        printed = re.fullmatch(
            rf"telesnap sandbox: open (http://127\.0\.0\.1:{port}/)\?k=([\w-]{{20,}}) in a browser",
            lines[0],
        )
        assert printed, lines[0]
        base, key = printed.groups()
        assert any("listening on 127.0.0.1 only" in line for line in lines)
        assert any(str(database) in line for line in lines)
        assert (
            f"  replay one: telesnap replay --game ID --database-url sqlite+aiosqlite:///{database}"
            in lines
        )
        # A browser's cookie jar (aiohttp's takes cookies from an IP address only when unsafe).
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(base) as refused:
                assert refused.status == 403
                assert "key of this run" in await refused.text()
            async with browser.get(f"{base}?k={key}") as response:
                assert response.status == 200
                assert "telesnap sandbox" in await response.text()
            async with browser.get(f"{base}_emulator/state") as state:
                assert state.status == 200, "the first load's cookie lets the page's calls in"
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


def run_sandbox(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``telesnap sandbox ARGUMENTS`` in ``folder``, as a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "telesnap", "sandbox", *arguments],
        cwd=folder,
        env={**os.environ, "TELESNAP_LOG_LEVEL": "WARNING"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_port_in_use_is_refused_by_the_machine_with_code_1(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = run_sandbox(tmp_path, "--port", port)
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"telesnap sandbox: cannot listen on 127.0.0.1:{port}: ")
    assert "in use" in line


def test_a_host_that_names_no_address_names_the_option_with_code_1(tmp_path: Path) -> None:
    result = run_sandbox(tmp_path, "--host", "no.such.host.invalid", "--port", str(free_port()))
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("telesnap sandbox: cannot listen on --host no.such.host.invalid: ")
