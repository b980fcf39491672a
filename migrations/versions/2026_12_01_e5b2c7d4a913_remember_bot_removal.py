"""Remember when the bot was removed from a chat, so the chat is erased after a while.

Revision ID: e5b2c7d4a913
Revises: e5b1c8a04d27
Create Date: 2026-12-01 22:00:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e5b2c7d4a913"
down_revision: str | Sequence[str] | None = "e5b1c8a04d27"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision.

    Plain ALTER TABLE, not batch mode: rebuilding ``chats`` on SQLite would drop the
    old table, and its ON DELETE CASCADE would take every game with it.
    """
    op.add_column("chats", sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_chats_removed_at", "chats", ["removed_at"], unique=False)


def downgrade() -> None:
    """Revert this revision (SQLite 3.35 and later drop a column in place)."""
    op.drop_index("ix_chats_removed_at", table_name="chats")
    op.drop_column("chats", "removed_at")
