"""The migration that gives erased seats their placeholder finds those erased before it."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import create_engine, text

from telesnap.services.privacy import FORMER_PLAYER
from telesnap.storage.migrate import alembic_config

from .migration_checks import add_a_user_and_a_chat

BEFORE = "7a0a5e39d2ab"
REVISION = "5d2b9c8e1f30"
AT = "2026-12-01 10:00:00"


def test_seats_of_a_person_who_erased_their_data_keep_the_placeholder(tmp_path: Path) -> None:
    path = tmp_path / "upgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, BEFORE)
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        add_a_user_and_a_chat(connection, AT)  # Ann, user 1
        connection.execute(
            text(
                "INSERT INTO users (id, first_name, created_at, updated_at)"
                " VALUES (2, :name, :at, :at)"  # user 2 erased their data
            ),
            {"name": FORMER_PLAYER, "at": AT},
        )
        connection.execute(
            text(
                "INSERT INTO games (id, chat_id, thread_id, status, creator_id, settings,"
                " created_at) VALUES (1, -5, 0, 'finished', 1, '{}', :at)"
            ),
            {"at": AT},
        )
        for seat, user_id in ((0, 1), (1, 2)):
            connection.execute(
                text(
                    "INSERT INTO game_players (game_id, seat, user_id, joined_at, afk_streak,"
                    " afk_total) VALUES (1, :seat, :user, :at, 0, 0)"
                ),
                {"seat": seat, "user": user_id, "at": AT},
            )
    command.upgrade(config, REVISION)
    with engine.connect() as connection:
        shown = dict(connection.execute(text("SELECT user_id, shown_name FROM game_players")).all())
    assert shown == {1: None, 2: FORMER_PLAYER}
    command.downgrade(config, BEFORE)
    with engine.connect() as connection:
        columns = connection.execute(text("PRAGMA table_info(game_players)")).all()
    engine.dispose()
    assert "shown_name" not in {column.name for column in columns}
