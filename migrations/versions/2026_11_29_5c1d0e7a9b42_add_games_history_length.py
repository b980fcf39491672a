"""Add games.history_length and games.turn_started_at.

``history_length``: how many operations the game's history holds; a worker
compares it with its cached copy of the game instead of counting history rows
on every move. ``turn_started_at``: when the current turn began; the turn
timer is measured from it, so a move writes no timer row.

Revision ID: 5c1d0e7a9b42
Revises: 79d42608642e
Create Date: 2026-11-29 14:10:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5c1d0e7a9b42"
down_revision: str | Sequence[str] | None = "79d42608642e"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("games") as batch:
        batch.add_column(
            sa.Column("history_length", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("turn_started_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE games SET history_length = COALESCE("
        "(SELECT max(seq) FROM game_operations WHERE game_operations.game_id = games.id), 0)"
    )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("games") as batch:
        batch.drop_column("turn_started_at")
        batch.drop_column("history_length")
