"""Dialect-specific ``INSERT ... ON CONFLICT`` for SQLite and PostgreSQL.

A statement that runs on every press is built once per dialect, with bound
parameters (:func:`per_dialect`): building and caching a statement anew costs
more CPU than SQLite takes to run it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

__all__ = ["per_dialect", "upsert_insert"]

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
