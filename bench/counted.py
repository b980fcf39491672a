"""``telesnap`` with its database work counted, and optionally profiled, for the benchmarks.

Run: python bench/counted.py run [telesnap's arguments]  (bench/bot.py starts the bots so)

It counts the SQL statements (by verb and table too) and the commits of every
engine in the process (SQLAlchemy's engine events, so SQLite and PostgreSQL
alike), and how long connections were held out of their pool. On ``SIGUSR1`` it
writes the counts so far, as JSON, to ``$TELESNAP_BENCH_COUNTS/<pid>.json``; the
bench signals at the start and at the end of the measured window and reads the
file. With ``$TELESNAP_BENCH_CPROFILE`` set to a folder, the first ``SIGUSR1``
also starts cProfile and the second stops it and writes its statistics to
``<pid>.prof`` there (the measured window only).
"""

from __future__ import annotations

import collections
import cProfile
import json
import os
import re
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import Pool

COUNTS: dict[str, int] = {"statements": 0, "commits": 0, "rollbacks": 0, "held_us": 0}
"""The statements, commits and rollbacks, and the µs connections were held out of the pool."""
KINDS: collections.Counter[str] = collections.Counter()
"""Each statement's count by its first words (with a profile: <pid>.sql.<signal>.json)."""
SHORT_KINDS: collections.Counter[str] = collections.Counter()
"""Each statement's count by its verb and table (``kind:INSERT inbox``), in every snapshot."""
_TABLE_AFTER = {"SELECT": "FROM", "DELETE": "FROM", "INSERT": "INTO", "UPDATE": "UPDATE"}
"""The word each verb names its table after."""
_profile: list[cProfile.Profile] = []
_signals = 0


def _statement(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
    COUNTS["statements"] += 1
    KINDS[" ".join(statement.split())[:90]] += 1
    SHORT_KINDS[_short_kind(statement)] += 1


def _short_kind(statement: str) -> str:
    """``UPDATE outbox_messages`` for an update of that table; ``BEGIN IMMEDIATE`` as it is."""
    text = statement.strip()
    if text.upper().startswith("BEGIN"):
        return " ".join(text.split()[:2])
    verb = text.split(None, 1)[0].upper()
    before = _TABLE_AFTER.get(verb)
    table = before and re.search(rf"\b{before}\s+\"?(\w+)", text, re.IGNORECASE)
    return f"{verb} {table.group(1)}" if table else verb


_checked_out: dict[int, float] = {}
"""When each pooled connection now taken was taken (perf_counter), by its record's id."""


def _checkout(_dbapi: Any, record: Any, _proxy: Any) -> None:
    _checked_out[id(record)] = time.perf_counter()


def _checkin(_dbapi: Any, record: Any) -> None:
    """Add the time the connection was held: SQLite's one connection is the bot's bottleneck."""
    began = _checked_out.pop(id(record), None)
    if began is not None:
        COUNTS["held_us"] += int((time.perf_counter() - began) * 1e6)


def _commit(*_: Any) -> None:
    COUNTS["commits"] += 1


def _rollback(*_: Any) -> None:
    COUNTS["rollbacks"] += 1


def _snapshot(_signum: int, _frame: FrameType | None) -> None:
    global _signals
    _signals += 1
    folder = os.environ.get("TELESNAP_BENCH_COUNTS")
    if folder:
        target = Path(folder) / f"{os.getpid()}.json"
        temporary = target.with_suffix(".tmp")
        kinds = {f"kind:{kind}": count for kind, count in SHORT_KINDS.items()}
        temporary.write_text(json.dumps({**COUNTS, **kinds, "signal": _signals}))
        temporary.replace(target)
    profiles = os.environ.get("TELESNAP_BENCH_CPROFILE")
    if not profiles:
        return
    kinds = Path(profiles) / f"{os.getpid()}.sql.{_signals}.json"
    kinds.write_text(json.dumps(dict(KINDS)))
    if _signals == 1:
        profiler = cProfile.Profile()
        _profile.append(profiler)
        profiler.enable()
    elif _signals == 2 and _profile:
        _profile[0].disable()
        _profile[0].dump_stats(str(Path(profiles) / f"{os.getpid()}.prof"))


def main() -> int:
    """Count, then run the ``telesnap`` command with this process's arguments."""
    event.listen(Engine, "before_cursor_execute", _statement)
    event.listen(Engine, "commit", _commit)
    event.listen(Engine, "rollback", _rollback)
    event.listen(Pool, "checkout", _checkout)
    event.listen(Pool, "checkin", _checkin)
    signal.signal(signal.SIGUSR1, _snapshot)
    from telesnap.cli import main as telesnap_main

    sys.argv[0] = "telesnap"
    return int(telesnap_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
