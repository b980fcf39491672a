"""What an operator reads in the log of ``telesnap run``: whose line it is, and when it stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.test_cli_errors import closed_port

TOKEN = "123456789:TEST-telesnap-emulator-token"


Running = tuple[subprocess.Popen[str], Iterator[str]]


@contextmanager
def waiting_for_the_api(folder: Path, log_level: str) -> Iterator[Running]:
    """``telesnap run`` against a Bot API that is not there (it warns and waits); its log."""
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("TELESNAP_")
    }
    environment.update(
        TELESNAP_TOKEN=TOKEN,
        TELESNAP_API_URL=f"http://127.0.0.1:{closed_port()}",  # unreachable: it warns and waits
        TELESNAP_LOG_LEVEL=log_level,
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "telesnap", "run"],
        cwd=folder,
        env=environment,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    with process.stderr:
        try:
            yield process, iter(process.stderr)
        finally:
            process.terminate()
            process.wait(timeout=60)


def test_a_log_line_names_its_process(tmp_path: Path) -> None:
    """Workers' lines interleave in the supervisor's output: the process id tells them apart."""
    with waiting_for_the_api(tmp_path, "WARNING") as (process, lines):
        line = next(line for line in lines if "unreachable" in line)
    assert f" WARNING telesnap.app[{process.pid}]: the Bot API is unreachable" in line


def test_a_stop_is_said_when_it_begins_and_when_it_ends(tmp_path: Path) -> None:
    with waiting_for_the_api(tmp_path, "INFO") as (process, lines):
        next(line for line in lines if "unreachable" in line)  # running, waiting for the API
        process.send_signal(signal.SIGTERM)
        rest = list(lines)
        assert process.wait(timeout=60) == 0
    said = [line.partition("]: ")[2].rstrip("\n") for line in rest if "telesnap.app[" in line]
    assert said[0] == "SIGTERM: stopping (finishing the updates taken)"
    assert said[-1] == "stopped"
