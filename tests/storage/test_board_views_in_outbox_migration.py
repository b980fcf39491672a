"""The migration that moves board views into the outbox rows keeps each view, and back."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import create_engine, text

from telesnap.storage.migrate import alembic_config

from .migration_checks import add_a_user_and_a_chat

BEFORE = "7e904c26c284"
REVISION = "7a0a5e39d2ab"
AT = "2026-12-01 10:00:00"


def test_each_view_moves_to_the_row_that_showed_it_and_back(tmp_path: Path) -> None:
    path = tmp_path / "upgrade.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, BEFORE)
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        add_a_user_and_a_chat(connection, AT)
        connection.execute(
            text(
                "INSERT INTO games (id, chat_id, thread_id, status, creator_id, settings,"
                " created_at)"
                " VALUES (1, -5, 0, 'running', 1, '{}', :at)"
            ),
            {"at": AT},
        )
        # Version 3 shown in message 30, then shown again in 31 (its view moved there,
        # keeping its first moment); version 4 sent with it but never on its own.
        for row_id, version, message_id in ((1, 3, 30), (2, 3, 31), (3, 4, 31)):
            connection.execute(
                text(
                    "INSERT INTO outbox_messages (id, chat_id, thread_id, kind, game_id,"
                    " board_version, payload, state, created_at, done_at, message_id)"
                    " VALUES (:id, -5, 0, 'board', 1, :version, '{}', 'sent', :at, :at, :message)"
                ),
                {"id": row_id, "version": version, "message": message_id, "at": AT},
            )
        connection.execute(
            text(
                "INSERT INTO board_views (game_id, version, message_id, shown_at)"
                " VALUES (1, 3, 31, '2026-12-01 10:00:00.250000')"
            )
        )
    command.upgrade(config, REVISION)
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT id, shown_at FROM outbox_messages ORDER BY id"))
        shown = {row.id: row.shown_at for row in rows}
    assert (shown[1], shown[3]) == (None, None)
    assert str(shown[2]).startswith("2026-12-01 10:00:00.25")
    command.downgrade(config, BEFORE)
    with engine.connect() as connection:
        views = connection.execute(
            text("SELECT game_id, version, message_id, shown_at FROM board_views")
        ).all()
        columns = connection.execute(text("PRAGMA table_info(outbox_messages)")).all()
    engine.dispose()
    assert [(v.game_id, v.version, v.message_id) for v in views] == [(1, 3, 31)]
    assert str(views[0].shown_at).startswith("2026-12-01 10:00:00.25")
    assert "shown_at" not in {column.name for column in columns}
