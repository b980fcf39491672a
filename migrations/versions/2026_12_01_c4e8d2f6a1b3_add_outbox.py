"""Add the durable outbox: messages a change must show, and each chat's sender lease and pace.

Revision ID: c4e8d2f6a1b3
Revises: c4e8a1f25b73
Create Date: 2026-12-01 12:45:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c4e8d2f6a1b3"
down_revision: str | Sequence[str] | None = "c4e8a1f25b73"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "outbox_messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("board_version", sa.Integer(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_outbox_messages_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_messages")),
    )
    with op.batch_alter_table("outbox_messages", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_outbox_messages_game_id"), ["game_id"], unique=False)
        batch_op.create_index(
            "ix_outbox_messages_state_chat_id", ["state", "chat_id", "id"], unique=False
        )
    op.create_table(
        "outbox_senders",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("pace", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("chat_id", name=op.f("pk_outbox_senders")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("outbox_senders")
    with op.batch_alter_table("outbox_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_messages_state_chat_id")
        batch_op.drop_index(batch_op.f("ix_outbox_messages_game_id"))
    op.drop_table("outbox_messages")
