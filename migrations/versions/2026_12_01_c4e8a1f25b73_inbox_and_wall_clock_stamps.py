"""The inbox of received updates (it takes over processed_updates); wall-clock stamps.

Every update is stored before Telegram is told it arrived, with its topic, its
raw JSON and its receipt stamp; a processed row is what ``processed_updates``
held, so those rows move into the inbox as processed and the old table goes.
Receipt stamps become wall-clock nanoseconds with the host that took them: the
history's ``receipt_monotonic_ns`` becomes ``receipt_stamp_ns`` (the old
monotonic readings meant nothing outside their process, so they are cleared)
and gains ``receipt_host_id``. A race left open by the stop for this upgrade
keeps its old deadline reading; the bot decides every open race at start, so
that reading is never waited for.

Revision ID: c4e8a1f25b73
Revises: 3f7a2c9d1e05
Create Date: 2026-12-01 12:50:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c4e8a1f25b73"
down_revision: str | Sequence[str] | None = "3f7a2c9d1e05"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PENDING = sa.text("processed_at IS NULL")


def _rename_stamp(old: str, new: str) -> None:
    """Rename a history column in place (SQLite and PostgreSQL both know RENAME COLUMN)."""
    op.execute(f"ALTER TABLE game_operations RENAME COLUMN {old} TO {new}")


def upgrade() -> None:
    """Create the inbox from processed_updates; rename and extend the history's stamp."""
    op.create_table(
        "inbox",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=False),
        sa.Column("is_call", sa.Boolean(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=True),
        sa.Column("stamp_ns", sa.BigInteger(), nullable=True),
        sa.Column("host_id", sa.String(length=64), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_inbox")),
    )
    op.create_index(
        "ix_inbox_pending",
        "inbox",
        ["chat_id", "thread_id", "update_id"],
        postgresql_where=_PENDING,
        sqlite_where=_PENDING,
    )
    op.create_index(op.f("ix_inbox_processed_at"), "inbox", ["processed_at"])
    op.execute(
        "INSERT INTO inbox (update_id, chat_id, thread_id, is_call, received_at, processed_at)"
        " SELECT update_id, 0, 0, false, processed_at, processed_at FROM processed_updates"
    )
    op.drop_table("processed_updates")
    _rename_stamp("receipt_monotonic_ns", "receipt_stamp_ns")
    op.execute("UPDATE game_operations SET receipt_stamp_ns = NULL")
    op.add_column("game_operations", sa.Column("receipt_host_id", sa.String(64), nullable=True))


def downgrade() -> None:
    """Back to processed_updates (the processed rows) and the monotonic stamp column."""
    op.create_table(
        "processed_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_processed_updates")),
    )
    op.execute(
        "INSERT INTO processed_updates (update_id, processed_at)"
        " SELECT update_id, processed_at FROM inbox WHERE processed_at IS NOT NULL"
    )
    op.drop_table("inbox")
    # In place (SQLite 3.35+), as the upgrade renames: no rebuild of the whole history.
    op.execute("ALTER TABLE game_operations DROP COLUMN receipt_host_id")
    op.execute("UPDATE game_operations SET receipt_stamp_ns = NULL")
    _rename_stamp("receipt_stamp_ns", "receipt_monotonic_ns")
