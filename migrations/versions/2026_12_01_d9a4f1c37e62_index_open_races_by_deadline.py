"""Index the open races by deadline: every worker looks for overdue ones every second or so.

Revision ID: d9a4f1c37e62
Revises: c4e8d2f6a1b3
Create Date: 2026-12-01 14:10:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d9a4f1c37e62"
down_revision: str | Sequence[str] | None = "c4e8d2f6a1b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("races", schema=None) as batch_op:
        batch_op.create_index(
            "ix_races_open_by_deadline",
            ["deadline_ns"],
            unique=False,
            sqlite_where=sa.text("state = 'open'"),
            postgresql_where=sa.text("state = 'open'"),
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("races", schema=None) as batch_op:
        batch_op.drop_index("ix_races_open_by_deadline")
