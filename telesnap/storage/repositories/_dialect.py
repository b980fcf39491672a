"""Dialect-specific ``INSERT ... ON CONFLICT`` for SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

__all__ = ["upsert_insert"]


def upsert_insert(session: AsyncSession, entity: Any) -> sqlite.Insert | postgresql.Insert:
    """Return the dialect's ``insert(entity)``, which supports ``on_conflict_do_*``."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(entity)
    return sqlite.insert(entity)
