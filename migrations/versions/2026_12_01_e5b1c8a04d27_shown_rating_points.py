"""Keep the rating players are shown: points from 1000 that a loss never raises.

``player_stats.rating_points``: the rating shown and ranked by (the board's
index moves to it from ``rating_ordinal``, which stays, exported).
``game_player_results.chat_points`` and ``global_points``: the shown rating
after each rated game, for the rating chart.

The upgrade fills them from the stored ``mu`` after each rated game, in the
order games ended, the way the recorder moves them: 20 points per unit of
``mu``, never up after a loss, never down after a win.

Revision ID: e5b1c8a04d27
Revises: d9a4f1c37e62
Create Date: 2026-12-01 22:30:00+00:00
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "e5b1c8a04d27"
down_revision: str | Sequence[str] | None = "d9a4f1c37e62"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ALL_CHATS = 0
# As telesnap.services.stats.figures defines them (revisions never import the package).
FIRST_MU = 25.0
RATING_BASELINE = 1000.0
POINTS_PER_MU = 20.0

_results = sa.table(
    "game_results",
    sa.column("id", sa.Integer()),
    sa.column("chat_id", sa.BigInteger()),
    sa.column("rated", sa.Boolean()),
)
_players = sa.table(
    "game_player_results",
    sa.column("game_id", sa.Integer()),
    sa.column("user_id", sa.BigInteger()),
    sa.column("result_id", sa.Integer()),
    sa.column("won", sa.Boolean()),
    sa.column("chat_mu", sa.Float()),
    sa.column("global_mu", sa.Float()),
    sa.column("chat_points", sa.Float()),
    sa.column("global_points", sa.Float()),
)
_stats = sa.table(
    "player_stats",
    sa.column("scope_id", sa.BigInteger()),
    sa.column("user_id", sa.BigInteger()),
    sa.column("rating_points", sa.Float()),
)


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("player_stats") as batch:
        batch.add_column(
            sa.Column("rating_points", sa.Float(), nullable=False, server_default="1000")
        )
        batch.drop_index(batch.f("ix_player_stats_scope_id_rating_ordinal"))
        batch.create_index(
            batch.f("ix_player_stats_scope_id_rating_points"),
            ["scope_id", "rating_points"],
            unique=False,
        )
    with op.batch_alter_table("game_player_results") as batch:
        batch.add_column(sa.Column("chat_points", sa.Float(), nullable=True))
        batch.add_column(sa.Column("global_points", sa.Float(), nullable=True))
    _fill_points()


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("game_player_results") as batch:
        batch.drop_column("global_points")
        batch.drop_column("chat_points")
    with op.batch_alter_table("player_stats") as batch:
        batch.drop_index(batch.f("ix_player_stats_scope_id_rating_points"))
        batch.create_index(
            batch.f("ix_player_stats_scope_id_rating_ordinal"),
            ["scope_id", "rating_ordinal"],
            unique=False,
        )
        batch.drop_column("rating_points")


def _shown_change(mu_change: float, *, won: bool) -> float:
    change = POINTS_PER_MU * mu_change
    return max(change, 0.0) if won else min(change, 0.0)


def _fill_points() -> None:
    """Walk every rated game in end order, moving each player's points in both scopes."""
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(
            _players.c.game_id,
            _players.c.user_id,
            _results.c.chat_id,
            _players.c.won,
            _players.c.chat_mu,
            _players.c.global_mu,
        )
        .select_from(_players.join(_results, _results.c.id == _players.c.result_id))
        .where(_results.c.rated.is_(True))
        .order_by(_players.c.result_id, _players.c.user_id)
    )
    mus: dict[tuple[int, int], float] = {}
    points: dict[tuple[int, int], float] = {}
    after: list[dict[str, Any]] = []
    for game_id, user_id, chat_id, won, chat_mu, global_mu in rows:
        shown = {}
        for column, scope, mu in (("chat", chat_id, chat_mu), ("global", ALL_CHATS, global_mu)):
            if mu is None:
                continue
            key = (scope, user_id)
            change = _shown_change(mu - mus.get(key, FIRST_MU), won=bool(won))
            points[key] = points.get(key, RATING_BASELINE) + change
            mus[key] = mu
            shown[column] = points[key]
        after.append(
            {
                "key_game": game_id,
                "key_user": user_id,
                "chat": shown.get("chat"),
                "global": shown.get("global"),
            }
        )
    if not after:
        return
    bind.execute(
        _players.update()
        .where(
            _players.c.game_id == sa.bindparam("key_game"),
            _players.c.user_id == sa.bindparam("key_user"),
        )
        .values(chat_points=sa.bindparam("chat"), global_points=sa.bindparam("global")),
        after,
    )
    bind.execute(
        _stats.update()
        .where(
            _stats.c.scope_id == sa.bindparam("key_scope"),
            _stats.c.user_id == sa.bindparam("key_user"),
        )
        .values(rating_points=sa.bindparam("points")),
        [
            {"key_scope": scope, "key_user": user, "points": value}
            for (scope, user), value in points.items()
        ],
    )
