"""Add board_views: when each version of a game's board was shown, in which message.

Reaction times are measured from the stored time of the board version the
caller pressed, so they hold after a refused action, a restart, and on any
worker. The games' ``board_message_id`` and ``board_shown_at`` (the newest
board only, written with the next move) are moved into it and dropped.

Revision ID: b7e3c2a91d40
Revises: 5c1d0e7a9b42
Create Date: 2026-12-01 09:40:00+00:00
"""

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b7e3c2a91d40"
down_revision: str | Sequence[str] | None = "5c1d0e7a9b42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_MOVED_COLUMNS = ("board_shown_at", "board_message_id")


def _drop_from_games(column: str) -> None:
    """Drop a column of games in place.

    Not with batch mode: on SQLite it rebuilds the table, and dropping the old
    one deletes every row that refers to it (``ON DELETE CASCADE``: the history,
    the seats, the timers). SQLite before 3.35 cannot drop a column in place; there
    the column stays, unused.
    """
    if op.get_bind().dialect.name == "sqlite" and sqlite3.sqlite_version_info < (3, 35, 0):
        return
    op.execute(f"ALTER TABLE games DROP COLUMN {column}")


def upgrade() -> None:
    """Apply this revision."""
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
        "SELECT id, board_version, board_message_id, board_shown_at FROM games "
        "WHERE board_message_id IS NOT NULL AND board_shown_at IS NOT NULL"
    )
    for column in _MOVED_COLUMNS:
        _drop_from_games(column)


def downgrade() -> None:
    """Revert this revision (the view of each game's current board goes back to its row)."""
    present = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("games")}
    if "board_message_id" not in present:
        op.add_column("games", sa.Column("board_message_id", sa.BigInteger(), nullable=True))
    if "board_shown_at" not in present:
        op.add_column(
            "games", sa.Column("board_shown_at", sa.DateTime(timezone=True), nullable=True)
        )
    op.execute(
        "UPDATE games SET "
        "board_message_id = (SELECT v.message_id FROM board_views v "
        "WHERE v.game_id = games.id AND v.version = games.board_version), "
        "board_shown_at = (SELECT v.shown_at FROM board_views v "
        "WHERE v.game_id = games.id AND v.version = games.board_version)"
    )
    op.drop_table("board_views")
