"""A board message remembers that its buttons came off.

The removal of a replaced board's buttons waits for the chat's next slot, in memory: a stop
could leave that board live, and a start cannot ask Telegram whether a message still has
buttons (taking off buttons it no longer has is refused). So a removal done is stored, and a
start takes off the buttons a stop left on. Boards shown before this revision count as done.

Revision ID: 8f3a1c6e2b57
Revises: 5d2b9c8e1f30
Create Date: 2026-12-04 22:10:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "8f3a1c6e2b57"
down_revision: str | Sequence[str] | None = "5d2b9c8e1f30"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column(
        "outbox_messages",
        sa.Column("bared", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.execute(sa.text("UPDATE outbox_messages SET bared = true WHERE shown_at IS NOT NULL"))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("outbox_messages") as batch_op:
        batch_op.drop_column("bared")
