"""The SQL a piece of code runs, for tests that check which statements it takes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


@contextmanager
def statements(engine: AsyncEngine) -> Iterator[list[str]]:
    """The SQL statements run on ``engine`` meanwhile, in order, each on one line."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(" ".join(statement.split()))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


@contextmanager
def commits(engine: AsyncEngine) -> Iterator[list[str]]:
    """One entry per transaction committed on ``engine`` meanwhile (read-only ones too)."""
    seen: list[str] = []

    def record(_conn: Any) -> None:
        seen.append("COMMIT")

    event.listen(engine.sync_engine, "commit", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "commit", record)


def kinds(seen: list[str]) -> list[str]:
    """Each statement's first words up to its table (``SELECT outbox_messages``, say)."""
    named = []
    for statement in seen:
        words = statement.split()
        verb = words[0]
        if verb == "SELECT":
            table = next(w for w in words[words.index("FROM") + 1 :])
        elif verb == "INSERT":
            table = words[2]
        elif verb == "UPDATE":
            table = words[1]
        else:
            table = words[1] if len(words) > 1 else ""
        named.append(f"{verb} {table}")
    return named
