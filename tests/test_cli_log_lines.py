"""What an operator reads in the log of ``telesnap run``: each line says whose process it is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.test_cli_errors import closed_port

TOKEN = "123456789:TEST-telesnap-emulator-token"


def test_a_log_line_names_its_process(tmp_path: Path) -> None:
    """Workers' lines interleave in the supervisor's output: the process id tells them apart."""
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("TELESNAP_")
    }
    environment.update(
        TELESNAP_TOKEN=TOKEN,
        TELESNAP_API_URL=f"http://127.0.0.1:{closed_port()}",  # unreachable: it warns and waits
        TELESNAP_LOG_LEVEL="WARNING",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "telesnap", "run"],
        cwd=tmp_path,
        env=environment,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        line = next(line for line in process.stderr if "unreachable" in line)
    finally:
        process.terminate()
        process.wait(timeout=60)
        process.stderr.close()
    assert f" WARNING telesnap.app[{process.pid}]: the Bot API is unreachable" in line


def test_a_stop_is_said_when_it_begins_and_when_it_ends(tmp_path: Path) -> None:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("TELESNAP_")
    }
    environment.update(
        TELESNAP_TOKEN=TOKEN,
        TELESNAP_API_URL=f"http://127.0.0.1:{closed_port()}",
        TELESNAP_LOG_LEVEL="INFO",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "telesnap", "run"],
        cwd=tmp_path,
        env=environment,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    with process.stderr as lines:
        next(line for line in lines if "unreachable" in line)  # running, waiting for the API
        process.send_signal(signal.SIGTERM)
        rest = lines.read().splitlines()
    assert process.wait(timeout=60) == 0
    said = [line.partition("]: ")[2] for line in rest if "telesnap.app[" in line]
    assert said[0] == "SIGTERM: stopping (finishing the updates taken)"
    assert said[-1] == "stopped"
