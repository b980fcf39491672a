"""A move writes its operations and nothing else: four columns of games go.

``board_version`` and ``history_length`` repeated what the history says;
``turn_started_at`` and ``last_action_at`` are read back from it too (the
``recorded_at`` of the move that began the turn, and of a player's last
move). Each move updated them, one more statement a press.

The columns are dropped in place (SQLite 3.35 and PostgreSQL both drop a
column without copying the table): recreating ``games`` would delete, with
foreign keys on, every row that refers to it.

A downgrade fills them again from the history, except ``board_version``,
which only the engine can count: it is 0 until the game's next move.

Revision ID: 7e904c26c284
Revises: c7e2f4a81d95
Create Date: 2026-12-03 17:00:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7e904c26c284"
down_revision: str | Sequence[str] | None = "c7e2f4a81d95"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("board_version", "history_length", "turn_started_at", "last_action_at")


def upgrade() -> None:
    """Apply this revision."""
    for column in _COLUMNS:
        op.drop_column("games", column)


def downgrade() -> None:
    """Revert this revision."""
    op.add_column(
        "games", sa.Column("board_version", sa.Integer(), nullable=False, server_default="0")
    )
    op.add_column(
        "games", sa.Column("history_length", sa.Integer(), nullable=False, server_default="0")
    )
    op.add_column("games", sa.Column("turn_started_at", sa.DateTime(timezone=True)))
    op.add_column("games", sa.Column("last_action_at", sa.DateTime(timezone=True)))
    operations = "FROM game_operations WHERE game_operations.game_id = games.id"
    op.execute(
        f"UPDATE games SET history_length = COALESCE((SELECT max(seq) {operations}), 0),"
        f" turn_started_at = (SELECT max(recorded_at) {operations}),"
        f" last_action_at = COALESCE((SELECT max(recorded_at) {operations}"
        " AND user_id IS NOT NULL), started_at, created_at)"
    )
