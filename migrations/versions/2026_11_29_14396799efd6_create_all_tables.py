"""Create all tables: users, chats, chat settings, games, players, history, updates, timers.

Revision ID: 14396799efd6
Revises:
Create Date: 2026-11-29 13:22:03.929260+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "14396799efd6"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "chats",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=256), nullable=True),
        sa.Column("is_forum", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "type IN ('private', 'group', 'supergroup', 'channel')",
            name=op.f("ck_chats_type_is_known"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chats")),
    )
    op.create_table(
        "processed_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_processed_updates")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("first_name", sa.String(length=256), nullable=False),
        sa.Column("last_name", sa.String(length=256), nullable=True),
        sa.Column("username", sa.String(length=64), nullable=True),
        sa.Column("language_code", sa.String(length=35), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    op.create_table(
        "chat_settings",
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("values", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_chat_settings_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chat_id", "thread_id", name=op.f("pk_chat_settings")),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("creator_id", sa.BigInteger(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("lobby_message_id", sa.BigInteger(), nullable=True),
        sa.Column("board_message_id", sa.BigInteger(), nullable=True),
        sa.Column("board_version", sa.Integer(), nullable=False),
        sa.Column("board_shown_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_action_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("end_reason", sa.String(length=64), nullable=True),
        sa.Column("winner_ids", sa.JSON(), nullable=True),
        sa.CheckConstraint(
            "status IN ('lobby', 'running', 'finished', 'abandoned', 'cancelled')",
            name=op.f("ck_games_status_is_known"),
        ),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name=op.f("fk_games_chat_id_chats"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["creator_id"], ["users.id"], name=op.f("fk_games_creator_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
    )
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.create_index(
            "uq_games_one_active_per_topic",
            ["chat_id", "thread_id"],
            unique=True,
            sqlite_where=sa.text("status IN ('lobby', 'running')"),
            postgresql_where=sa.text("status IN ('lobby', 'running')"),
        )

    op.create_table(
        "game_operations",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("update_id", sa.BigInteger(), nullable=True),
        sa.Column("receipt_wall_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("receipt_monotonic_ns", sa.BigInteger(), nullable=True),
        sa.Column("reaction_ms", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_game_operations_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_game_operations")),
    )
    with op.batch_alter_table("game_operations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_game_operations_user_id_kind"), ["user_id", "kind"], unique=False
        )

    op.create_table(
        "game_players",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("left_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("leave_reason", sa.String(length=64), nullable=True),
        sa.Column("afk_streak", sa.Integer(), nullable=False),
        sa.Column("afk_total", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_game_players_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_game_players_user_id_users")
        ),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_game_players")),
        sa.UniqueConstraint("game_id", "user_id", name=op.f("uq_game_players_game_id_user_id")),
    )
    op.create_table(
        "timers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("fired_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_timers_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_timers")),
    )
    with op.batch_alter_table("timers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_timers_due_at"), ["due_at"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("timers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_timers_due_at"))

    op.drop_table("timers")
    op.drop_table("game_players")
    with op.batch_alter_table("game_operations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_game_operations_user_id_kind"))

    op.drop_table("game_operations")
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_games_one_active_per_topic",
            sqlite_where=sa.text("status IN ('lobby', 'running')"),
            postgresql_where=sa.text("status IN ('lobby', 'running')"),
        )

    op.drop_table("games")
    op.drop_table("chat_settings")
    op.drop_table("users")
    op.drop_table("processed_updates")
    op.drop_table("chats")
