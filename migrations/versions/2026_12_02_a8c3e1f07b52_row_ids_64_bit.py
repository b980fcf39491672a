"""Make generated row ids, and the columns that refer to them, 64-bit.

At 60 rows a second a 32-bit id runs out after about 400 days. PostgreSQL
widens the columns and their sequences; SQLite's ``INTEGER PRIMARY KEY`` is
64-bit already, so there is nothing to do there.

Revision ID: a8c3e1f07b52
Revises: e5b2c7d4a913
Create Date: 2026-12-02 01:10:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a8c3e1f07b52"
down_revision: str | Sequence[str] | None = "e5b2c7d4a913"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GENERATED = (
    ("games", "id"),
    ("outbox_messages", "id"),
    ("timers", "id"),
    ("races", "id"),
    ("game_results", "id"),
)
"""The auto-numbered ids."""
REFERRING = (
    ("game_players", "game_id"),
    ("game_operations", "game_id"),
    ("board_views", "game_id"),
    ("timers", "game_id"),
    ("outbox_messages", "game_id"),
    ("races", "game_id"),
    ("game_results", "game_id"),
    ("game_player_results", "game_id"),
    ("game_player_results", "result_id"),
    ("player_stats", "last_game_id"),
)
"""The columns that hold one of those ids."""


def _retype(column_type: str) -> None:
    for table, column in (*REFERRING, *GENERATED):
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {column_type}")
    connection = op.get_bind()
    for table, column in GENERATED:
        sequence = connection.execute(
            sa.text("SELECT pg_get_serial_sequence(:table, :column)"),
            {"table": table, "column": column},
        ).scalar_one()
        op.execute(f"ALTER SEQUENCE {sequence} AS {column_type}")


def upgrade() -> None:
    """Apply this revision."""
    if op.get_bind().dialect.name == "postgresql":
        _retype("BIGINT")


def downgrade() -> None:
    """Revert this revision (fails if an id no longer fits 32 bits)."""
    if op.get_bind().dialect.name == "postgresql":
        _retype("INTEGER")
