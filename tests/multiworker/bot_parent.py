"""A parent that has imported telesnap once and forks ``telesnap`` processes on request.

Started by the tests (``python tests/multiworker/bot_parent.py``), it imports
what ``telesnap run`` imports, then reads requests, one JSON object a line, on
its stdin:

- ``{"op": "start", "argv": [...], "env": {...}, "cwd": "...", "log": "..."}``: fork
  a child that becomes ``telesnap ARGV``, exactly as ``python -m telesnap ARGV``
  would run it from there on: its environment replaced by ``env``, in ``cwd``,
  its stdout and stderr appended to ``log``, stdin from /dev/null, the signal
  handlers a fresh interpreter has, and its exit through the interpreter's own
  shutdown. Answered by ``{"op": "started", "pid": PID}``.
- ``{"op": "signal", "pid": PID, "signal": N}``: send signal N to that child, if it
  has not exited yet (the parent reaps its children itself, so a pid it has not
  reported is still that child's, never a reused one).

Each child's exit is reported, once reaped, as ``{"op": "exited", "pid": PID,
"code": C}`` (C as ``asyncio`` gives it: the exit code, or minus the signal that
ended it). The parent exits when its stdin closes.

Each child is a real process of its own: killed with SIGKILL it dies as any
process does, with whatever it had not committed. What it skips is the Python
start and the imports (about 0.8 s of CPU each), paid once here.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import selectors
import signal
import sys
from typing import Any

# What ``telesnap run`` imports before it does anything (the parser imports the
# sub-command's module when it runs; this does it ahead, once).
import telesnap.app
import telesnap.cli
import telesnap.cli.run
import telesnap.emulator.server


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _become_child(request: dict[str, Any], closing: list[int]) -> None:
    """In the forked child: take on the environment of a fresh ``telesnap`` process."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in closing:
        os.close(fd)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # The standard streams a fresh interpreter opens on these descriptors (they live as
    # long as the process: no context manager).
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = io.TextIOWrapper(
        open(1, "wb", buffering=0 if unbuffered else -1, closefd=False),  # noqa: SIM115
        write_through=unbuffered,
    )
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", buffering=0, closefd=False),  # noqa: SIM115
        errors="backslashreplace",
        line_buffering=True,
        write_through=True,
    )
    sys.argv = [telesnap.cli.__file__, *request["argv"]]


def serve() -> list[str] | None:
    """Answer requests until stdin closes (None); in a forked child, return its argv."""
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_read, False)
    os.set_blocking(wakeup_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd does the waking
    signal.set_wakeup_fd(wakeup_write)
    children: set[int] = set()
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(wakeup_read, selectors.EVENT_READ)
    stdin_open = True
    pending = b""
    while stdin_open or children:
        lines: list[bytes] = []
        for key, _ in selector.select():
            if key.fileobj == wakeup_read:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wakeup_read, 512):
                        pass
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                stdin_open = False
                selector.unregister(0)
                continue
            *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            request = json.loads(line)
            if request["op"] == "start":
                sys.stdout.flush()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _become_child(request, [wakeup_read, wakeup_write])
                    return list(request["argv"])
                children.add(pid)
                _send({"op": "started", "pid": pid})
            elif request["op"] == "signal" and request["pid"] in children:
                os.kill(request["pid"], request["signal"])
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            _send({"op": "exited", "pid": pid, "code": os.waitstatus_to_exitcode(status)})
        if not stdin_open and children:
            for pid in children:  # the tests are gone: so are their processes
                os.kill(pid, signal.SIGKILL)
    return None


if __name__ == "__main__":
    argv = serve()
    if argv is not None:
        sys.exit(telesnap.cli.main(argv))
