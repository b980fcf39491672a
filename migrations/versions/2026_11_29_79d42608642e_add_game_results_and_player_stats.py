"""Add the stats tables: game results, player results per game, player stats per chat.

Revision ID: 79d42608642e
Revises: 14396799efd6
Create Date: 2026-11-29 13:31:21.065279+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "79d42608642e"
down_revision: str | Sequence[str] | None = "14396799efd6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "player_stats",
        sa.Column("scope_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("snaps_won", sa.Integer(), nullable=False),
        sa.Column("pots_won", sa.Integer(), nullable=False),
        sa.Column("ties", sa.Integer(), nullable=False),
        sa.Column("wrong_calls", sa.Integer(), nullable=False),
        sa.Column("cards_won", sa.Integer(), nullable=False),
        sa.Column("afks", sa.Integer(), nullable=False),
        sa.Column("timed_calls", sa.Integer(), nullable=False),
        sa.Column("median_reaction_ms", sa.Integer(), nullable=True),
        sa.Column("best_reaction_ms", sa.Integer(), nullable=True),
        sa.Column("rated_games", sa.Integer(), nullable=False),
        sa.Column("rating_mu", sa.Float(), nullable=False),
        sa.Column("rating_sigma", sa.Float(), nullable=False),
        sa.Column("rating_ordinal", sa.Float(), nullable=False),
        sa.Column("last_game_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope_id", "user_id", name=op.f("pk_player_stats")),
    )
    with op.batch_alter_table("player_stats", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_player_stats_scope_id_rating_ordinal"),
            ["scope_id", "rating_ordinal"],
            unique=False,
        )

    op.create_table(
        "game_player_results",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("walked_away", sa.String(length=16), nullable=True),
        sa.Column("snaps_won", sa.Integer(), nullable=False),
        sa.Column("pots_won", sa.Integer(), nullable=False),
        sa.Column("ties", sa.Integer(), nullable=False),
        sa.Column("wrong_calls", sa.Integer(), nullable=False),
        sa.Column("cards_won", sa.Integer(), nullable=False),
        sa.Column("chat_mu", sa.Float(), nullable=True),
        sa.Column("chat_sigma", sa.Float(), nullable=True),
        sa.Column("global_mu", sa.Float(), nullable=True),
        sa.Column("global_sigma", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_game_player_results_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "user_id", name=op.f("pk_game_player_results")),
    )
    with op.batch_alter_table("game_player_results", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_game_player_results_user_id_game_id"),
            ["user_id", "game_id"],
            unique=False,
        )

    op.create_table(
        "game_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("end_reason", sa.String(length=16), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("flips", sa.Integer(), nullable=False),
        sa.Column("operations", sa.Integer(), nullable=False),
        sa.Column("counted", sa.Boolean(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("winner_ids", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_game_results_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game_results")),
        sa.UniqueConstraint("game_id", name=op.f("uq_game_results_game_id")),
    )
    with op.batch_alter_table("game_results", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_game_results_chat_id_id"), ["chat_id", "id"], unique=False
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("game_results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_game_results_chat_id_id"))

    op.drop_table("game_results")
    with op.batch_alter_table("game_player_results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_game_player_results_user_id_game_id"))

    op.drop_table("game_player_results")
    with op.batch_alter_table("player_stats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_player_stats_scope_id_rating_ordinal"))

    op.drop_table("player_stats")
