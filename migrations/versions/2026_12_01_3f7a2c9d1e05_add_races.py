"""Add races: one row per Snap race, written with its first correct call.

A race that was collecting calls when the bot stopped for this upgrade has no
row yet: every running game whose last operation is a call gets an open race
due at once, and the bot decides it at start (a game whose calls turn out to
need no race just closes the row).

Revision ID: 3f7a2c9d1e05
Revises: 73228d083249
Create Date: 2026-12-01 09:40:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3f7a2c9d1e05"
down_revision: str | Sequence[str] | None = "73228d083249"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "races",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("opened_seq", sa.Integer(), nullable=False),
        sa.Column("deadline_ns", sa.BigInteger(), nullable=False),
        sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_seq", sa.Integer(), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_races_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_races")),
    )
    with op.batch_alter_table("races", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_races_game_id"), ["game_id"], unique=False)
        batch_op.create_index(
            "uq_races_one_open_per_game",
            ["game_id"],
            unique=True,
            sqlite_where=sa.text("state = 'open'"),
            postgresql_where=sa.text("state = 'open'"),
        )
    op.execute(
        "INSERT INTO races (game_id, chat_id, thread_id, state, opened_seq, deadline_ns, "
        "deadline_at, opened_at) "
        "SELECT games.id, games.chat_id, games.thread_id, 'open', games.history_length, 0, "
        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP FROM games JOIN game_operations "
        "ON game_operations.game_id = games.id AND game_operations.seq = games.history_length "
        "WHERE games.status = 'running' AND game_operations.kind = 'snap_called'"
    )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("races", schema=None) as batch_op:
        batch_op.drop_index("uq_races_one_open_per_game")
        batch_op.drop_index(batch_op.f("ix_races_game_id"))
    op.drop_table("races")
