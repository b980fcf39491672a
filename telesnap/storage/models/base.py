"""The declarative base, the shared metadata and the column types every table uses."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, DateTime, Dialect, Integer, MetaData, TypeDecorator
from sqlalchemy.orm import DeclarativeBase

__all__ = ["Base", "RowId", "UtcDateTime", "utc_now"]

# Stable constraint names: Alembic's batch mode on SQLite needs them.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


RowId = BigInteger().with_variant(Integer(), "sqlite")
"""The type of a generated row id, and of the columns that refer to one: 64-bit, so that
ids never run out (at 60 rows a second a 32-bit id lasts about 400 days). SQLite keeps
``INTEGER``: only an ``INTEGER PRIMARY KEY`` is its auto-numbered row id, and it is 64-bit."""


def fits_bigint(value: int) -> bool:
    """Whether ``value`` fits a 64-bit column (drivers refuse larger numbers, which name no row)."""
    return -(2**63) <= value < 2**63


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime (every timestamp's default)."""
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A ``DateTime(timezone=True)`` that only accepts aware values and returns aware UTC.

    Naive values are ambiguous, so refused; zoneless values read back (SQLite) were stored as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Convert an aware datetime to UTC; SQLite gets it without the zone suffix."""
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()} given: use an aware UTC value")
        utc_value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return utc_value.replace(tzinfo=None)
        return utc_value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Return the stored value as an aware UTC datetime."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    """The declarative base of every telesnap table."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
