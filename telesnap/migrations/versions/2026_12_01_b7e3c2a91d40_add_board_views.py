"""Add board_views: when each version of a game's board was shown, in which message.

Reaction times are measured from the stored time of the board version the
caller pressed, so they hold after a refused action, a restart, and on any
worker. The games' ``board_message_id`` and ``board_shown_at`` (the newest
board only, written with the next move) are moved into it and dropped.

Revision ID: b7e3c2a91d40
Revises: 5c1d0e7a9b42
Create Date: 2026-12-01 09:40:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b7e3c2a91d40"
down_revision: str | Sequence[str] | None = "5c1d0e7a9b42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_CARRY = "_board_views_carry"
"""Holds the rows being moved while ``games`` is rebuilt: on SQLite, batch mode copies
the table and drops the old one, which would delete rows that refer to it."""


def upgrade() -> None:
    """Apply this revision."""
    op.execute(
        f"CREATE TABLE {_CARRY} AS SELECT id AS game_id, board_version AS version, "
        "board_message_id AS message_id, board_shown_at AS shown_at FROM games "
        "WHERE board_message_id IS NOT NULL AND board_shown_at IS NOT NULL"
    )
    with op.batch_alter_table("games") as batch:
        batch.drop_column("board_shown_at")
        batch.drop_column("board_message_id")
    op.create_table(
        "board_views",
        sa.Column("game_id", sa.Integer(), nullable=False),
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
        "INSERT INTO board_views (game_id, version, message_id, shown_at) "
        f"SELECT game_id, version, message_id, shown_at FROM {_CARRY}"
    )
    op.drop_table(_CARRY)


def downgrade() -> None:
    """Revert this revision (the view of each game's current board goes back to its row)."""
    op.execute(
        f"CREATE TABLE {_CARRY} AS SELECT v.game_id, v.message_id, v.shown_at "
        "FROM board_views v JOIN games g ON g.id = v.game_id AND v.version = g.board_version"
    )
    op.drop_table("board_views")
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("board_message_id", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("board_shown_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE games SET "
        f"board_message_id = (SELECT c.message_id FROM {_CARRY} c WHERE c.game_id = games.id), "
        f"board_shown_at = (SELECT c.shown_at FROM {_CARRY} c WHERE c.game_id = games.id)"
    )
    op.drop_table(_CARRY)
