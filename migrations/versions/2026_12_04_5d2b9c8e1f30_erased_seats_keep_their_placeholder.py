"""A seat of someone who erased their data keeps the placeholder as its name.

Past games read their players' names from the users table, which a person who
plays again fills anew: the seats they erased would show their name again. A
seat's ``shown_name``, when set, is the name it shows instead. Seats erased
before this revision are found by their user still bearing the placeholder.

Revision ID: 5d2b9c8e1f30
Revises: 7a0a5e39d2ab
Create Date: 2026-12-04 08:30:00+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5d2b9c8e1f30"
down_revision: str | Sequence[str] | None = "7a0a5e39d2ab"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FORMER_PLAYER = "a former player"
"""The placeholder of ``telesnap.services.privacy`` as of this revision."""


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("game_players", sa.Column("shown_name", sa.String(64), nullable=True))
    op.execute(
        sa.text(
            "UPDATE game_players SET shown_name = :name WHERE user_id IN"
            " (SELECT id FROM users WHERE first_name = :name)"
        ).bindparams(name=FORMER_PLAYER)
    )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("game_players") as batch_op:
        batch_op.drop_column("shown_name")
