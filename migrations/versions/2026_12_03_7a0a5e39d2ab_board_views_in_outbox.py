"""Board views move into the outbox rows that showed them; board_views is dropped.

The row marked sent as the board its message shows gets shown_at, in the
same statement that marks it sent (one insert less for every board). The
views carried over are those whose row is still kept: the others are of rows
settled long ago, which the outbox had already forgotten.

Revision ID: 7a0a5e39d2ab
Revises: 7e904c26c284
Create Date: 2026-12-03 23:50:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7a0a5e39d2ab"
down_revision: str | Sequence[str] | None = "7e904c26c284"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column(
        "outbox_messages", sa.Column("shown_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.execute(
        "UPDATE outbox_messages SET shown_at = (SELECT v.shown_at FROM board_views v"
        " WHERE v.game_id = outbox_messages.game_id"
        " AND v.version = outbox_messages.board_version"
        " AND v.message_id = outbox_messages.message_id)"
        " WHERE kind = 'board' AND state = 'sent'"
    )
    op.drop_table("board_views")


def downgrade() -> None:
    """Revert this revision (each version's first showing, in its newest message)."""
    op.create_table(
        "board_views",
        sa.Column("game_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_board_views_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "version", name=op.f("pk_board_views")),
    )
    op.execute(
        "INSERT INTO board_views (game_id, version, message_id, shown_at)"
        " SELECT game_id, board_version, MAX(message_id), MIN(shown_at) FROM outbox_messages"
        " WHERE shown_at IS NOT NULL AND game_id IS NOT NULL AND board_version IS NOT NULL"
        " AND message_id IS NOT NULL GROUP BY game_id, board_version"
    )
    with op.batch_alter_table("outbox_messages") as batch:
        batch.drop_column("shown_at")
