"""Chat leases are advisory locks now: the outbox senders keep only each chat's pace.

A chat's sender lease is held as a PostgreSQL advisory lock on the worker's
coordination connection (``telesnap/coordination/postgres.py``), released with
the worker; with SQLite it is kept in the one process. The lease columns go.

Revision ID: b3d1e7a09c44
Revises: a7c3e9f15b20
Create Date: 2026-12-03 10:00:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b3d1e7a09c44"
down_revision: str | Sequence[str] | None = "a7c3e9f15b20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("outbox_senders", schema=None) as batch_op:
        batch_op.drop_column("lease_until")
        batch_op.drop_column("owner")


def downgrade() -> None:
    """Revert this revision (every chat unleased)."""
    with op.batch_alter_table("outbox_senders", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("owner", sa.String(length=64), nullable=False, server_default="")
        )
        batch_op.add_column(
            sa.Column(
                "lease_until",
                sa.DateTime(timezone=True),
                nullable=False,
                server_default=sa.text("CURRENT_TIMESTAMP"),
            )
        )
