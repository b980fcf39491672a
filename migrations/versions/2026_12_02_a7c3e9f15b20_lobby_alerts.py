"""Lobby alerts (/notify) and the private chats the bot may write to.

Revision ID: a7c3e9f15b20
Revises: a8c3e1f07b52
Create Date: 2026-12-02 01:00:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a7c3e9f15b20"
down_revision: str | Sequence[str] | None = "a8c3e1f07b52"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "lobby_alerts",
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_lobby_alerts_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chat_id", "user_id", name=op.f("pk_lobby_alerts")),
    )
    op.create_index(op.f("ix_lobby_alerts_user_id"), "lobby_alerts", ["user_id"], unique=False)
    op.create_table(
        "direct_chats",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_direct_chats")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("direct_chats")
    op.drop_index(op.f("ix_lobby_alerts_user_id"), table_name="lobby_alerts")
    op.drop_table("lobby_alerts")
