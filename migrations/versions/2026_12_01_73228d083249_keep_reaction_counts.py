"""Keep reaction times as counts per millisecond, with a median cursor per player.

Also number each player's game results in end order, for the rating timeline.

``reaction_counts``: per player and scope (a chat, or 0 for every chat), how
many correct calls took each whole number of milliseconds.
``player_stats.lower_median_ms`` and ``calls_faster_than_lower_median``: where
the median sits in those counts, so a game end moves it without reading the
player's past calls.

The upgrade fills them from what is already stored (the counts from the
correct calls of finished games, as the figures have always counted them),
and sets each player's reaction figures from the counts.

Revision ID: 73228d083249
Revises: b7e3c2a91d40
Create Date: 2026-12-01 09:45:00+00:00
"""

import statistics
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "73228d083249"
down_revision: str | Sequence[str] | None = "b7e3c2a91d40"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ALL_CHATS = 0

# The tables as this revision knows them (revisions never import the models).
_operations = sa.table(
    "game_operations",
    sa.column("game_id", sa.Integer()),
    sa.column("kind", sa.String()),
    sa.column("payload", sa.JSON()),
    sa.column("user_id", sa.BigInteger()),
    sa.column("reaction_ms", sa.Integer()),
)
_games = sa.table(
    "games",
    sa.column("id", sa.Integer()),
    sa.column("chat_id", sa.BigInteger()),
    sa.column("status", sa.String()),
)
_counts = sa.table(
    "reaction_counts",
    sa.column("scope_id", sa.BigInteger()),
    sa.column("user_id", sa.BigInteger()),
    sa.column("reaction_ms", sa.Integer()),
    sa.column("calls", sa.Integer()),
)
_stats = sa.table(
    "player_stats",
    sa.column("scope_id", sa.BigInteger()),
    sa.column("user_id", sa.BigInteger()),
    sa.column("timed_calls", sa.Integer()),
    sa.column("median_reaction_ms", sa.Integer()),
    sa.column("best_reaction_ms", sa.Integer()),
    sa.column("lower_median_ms", sa.Integer()),
    sa.column("calls_faster_than_lower_median", sa.Integer()),
)


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "reaction_counts",
        sa.Column("scope_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("reaction_ms", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "scope_id", "user_id", "reaction_ms", name=op.f("pk_reaction_counts")
        ),
    )
    with op.batch_alter_table("player_stats") as batch:
        batch.add_column(sa.Column("lower_median_ms", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column(
                "calls_faster_than_lower_median", sa.Integer(), nullable=False, server_default="0"
            )
        )
    _count_past_reaction_times()
    _set_reaction_figures()
    _number_player_results()


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("game_player_results") as batch:
        batch.drop_index(batch.f("ix_game_player_results_user_id_result_id"))
        batch.create_index(
            batch.f("ix_game_player_results_user_id_game_id"), ["user_id", "game_id"], unique=False
        )
        batch.drop_column("result_id")
    with op.batch_alter_table("player_stats") as batch:
        batch.drop_column("calls_faster_than_lower_median")
        batch.drop_column("lower_median_ms")
    op.drop_table("reaction_counts")


def _number_player_results() -> None:
    """Give every player result its game's place in the end order, then index it."""
    with op.batch_alter_table("game_player_results") as batch:
        batch.add_column(sa.Column("result_id", sa.Integer(), nullable=True))
    results = sa.table("game_results", sa.column("id"), sa.column("game_id"))
    players = sa.table("game_player_results", sa.column("game_id"), sa.column("result_id"))
    end_order = (
        sa.select(results.c.id).where(results.c.game_id == players.c.game_id).scalar_subquery()
    )
    op.execute(players.update().values(result_id=end_order))
    with op.batch_alter_table("game_player_results") as batch:
        batch.alter_column("result_id", existing_type=sa.Integer(), nullable=False)
        batch.drop_index(batch.f("ix_game_player_results_user_id_game_id"))
        batch.create_index(
            batch.f("ix_game_player_results_user_id_result_id"),
            ["user_id", "result_id"],
            unique=False,
        )


def _count_past_reaction_times() -> None:
    """Count the correct calls of every finished game, per chat and across every chat."""
    per_chat = (_games.c.chat_id,)
    for scope, grouped in (
        (_games.c.chat_id, per_chat),
        (sa.literal(ALL_CHATS, sa.BigInteger()), ()),
    ):
        calls = (
            sa.select(scope, _operations.c.user_id, _operations.c.reaction_ms, sa.func.count())
            .select_from(_operations.join(_games, _games.c.id == _operations.c.game_id))
            .where(
                _operations.c.kind == "snap_called",
                _operations.c.reaction_ms.is_not(None),
                _operations.c.user_id.is_not(None),
                _operations.c.payload["verdict"].as_string() == "pending",
                _games.c.status == "finished",
            )
            .group_by(*grouped, _operations.c.user_id, _operations.c.reaction_ms)
        )
        op.execute(
            _counts.insert().from_select(["scope_id", "user_id", "reaction_ms", "calls"], calls)
        )


def _set_reaction_figures() -> None:
    """Every player's timed calls, median, best and median cursor, from the counts."""
    rows = op.get_bind().execute(
        sa.select(
            _counts.c.scope_id, _counts.c.user_id, _counts.c.reaction_ms, _counts.c.calls
        ).order_by(_counts.c.scope_id, _counts.c.user_id, _counts.c.reaction_ms)
    )
    figures = list(_figures(rows))
    if not figures:
        return
    statement = (
        _stats.update()
        .where(
            _stats.c.scope_id == sa.bindparam("key_scope"),
            _stats.c.user_id == sa.bindparam("key_user"),
        )
        .values(
            timed_calls=sa.bindparam("calls"),
            median_reaction_ms=sa.bindparam("median"),
            best_reaction_ms=sa.bindparam("best"),
            lower_median_ms=sa.bindparam("lower"),
            calls_faster_than_lower_median=sa.bindparam("faster"),
        )
    )
    op.get_bind().execute(statement, figures)


def _figures(rows: Iterable[Any]) -> Iterator[dict[str, int]]:
    buckets: list[tuple[int, int]] = []
    key: tuple[int, int] | None = None
    for scope_id, user_id, reaction_ms, calls in rows:
        if key is not None and key != (scope_id, user_id):
            yield _figures_of(key, buckets)
            buckets = []
        key = (scope_id, user_id)
        buckets.append((reaction_ms, calls))
    if key is not None:
        yield _figures_of(key, buckets)


def _figures_of(key: tuple[int, int], buckets: list[tuple[int, int]]) -> dict[str, int]:
    """One player's figures from their buckets (fastest first), as the recorder keeps them."""
    total = sum(calls for _, calls in buckets)
    lower_rank, upper_rank = (total - 1) // 2, total // 2
    rank = 0
    lower = faster = upper = None
    for reaction_ms, calls in buckets:
        if lower is None and rank <= lower_rank < rank + calls:
            lower, faster = reaction_ms, rank
        if rank <= upper_rank < rank + calls:
            upper = reaction_ms
            break
        rank += calls
    if lower is None or faster is None or upper is None:
        raise ValueError(f"the reaction counts of {key} do not add up")  # counts are >= 1
    return {
        "key_scope": key[0],
        "key_user": key[1],
        "calls": total,
        "median": int(statistics.median([lower, upper])),
        "best": buckets[0][0],
        "lower": lower,
        "faster": faster,
    }
