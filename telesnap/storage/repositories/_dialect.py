"""What the repositories' statements share: ``INSERT ... ON CONFLICT`` per dialect, a bulk delete.

Per-press statements are built once per dialect (:func:`per_dialect`): building and caching
one anew costs more CPU than SQLite takes to run it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from sqlalchemy import CursorResult, Delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

__all__ = ["bulk_delete", "per_dialect", "upsert_insert"]

S = TypeVar("S")


def upsert_insert(session: AsyncSession, entity: Any) -> sqlite.Insert | postgresql.Insert:
    """Return the dialect's ``insert(entity)``, which supports ``on_conflict_do_*``."""
    return _insert_for(session.get_bind().dialect.name, entity)


def _insert_for(dialect: str, entity: Any) -> sqlite.Insert | postgresql.Insert:
    return postgresql.insert(entity) if dialect == "postgresql" else sqlite.insert(entity)


def per_dialect(
    build: Callable[[Callable[[Any], sqlite.Insert | postgresql.Insert]], S],
) -> Callable[[AsyncSession], S]:
    """The statement ``build`` makes (from the dialect's ``insert``), built once per dialect."""

    @functools.cache
    def built(dialect: str) -> S:
        return build(functools.partial(_insert_for, dialect))

    def for_session(session: AsyncSession) -> S:
        return built(session.get_bind().dialect.name)

    return for_session


async def bulk_delete(session: AsyncSession, statement: Delete) -> int:
    """Run a bulk delete of rows no session holds; return how many went."""
    options = {"synchronize_session": False}
    result = await session.execute(statement, execution_options=options)
    return cast("CursorResult[Any]", result).rowcount
