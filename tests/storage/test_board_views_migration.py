"""The board_views migration carries each game's last shown board over, and back."""

from __future__ import annotations

import argparse
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from .migration_checks import add_a_user_and_a_chat

ROOT = Path(__file__).resolve().parents[2]
BEFORE = "5c1d0e7a9b42"
REVISION = "b7e3c2a91d40"


def test_the_last_shown_board_moves_to_board_views_and_back(tmp_path: Path) -> None:
    path = tmp_path / "upgrade.db"
    config = Config(
        ROOT / "alembic.ini",
        cmd_opts=argparse.Namespace(x=[f"url=sqlite+aiosqlite:///{path}"]),
    )
    command.upgrade(config, BEFORE)
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        add_a_user_and_a_chat(connection, "2026-11-30 19:00:00")
        for game_id, message_id, shown in ((1, 77, "2026-11-30 20:00:00.250000"), (2, None, None)):
            connection.execute(
                text(
                    "INSERT INTO games (id, chat_id, thread_id, status, creator_id, settings,"
                    " board_version, board_message_id, board_shown_at, created_at,"
                    " last_action_at, history_length) VALUES (:id, -5, :id, 'running', 1, '{}',"
                    " 9, :message, :shown, :at, :at, 0)"
                ),
                {"id": game_id, "message": message_id, "shown": shown, "at": "2026-11-30 19:00"},
            )
        connection.execute(
            text(
                "INSERT INTO game_operations (game_id, seq, kind, payload, recorded_at)"
                " VALUES (1, 1, 'game_started', '{}', '2026-11-30 19:00:00')"
            )
        )
    command.upgrade(config, REVISION)
    with engine.connect() as connection:
        views = connection.execute(
            text("SELECT game_id, version, message_id, shown_at FROM board_views")
        ).all()
        operations = connection.execute(text("SELECT count(*) FROM game_operations")).scalar()
    assert operations == 1  # rebuilding the games table keeps the rows that refer to it
    assert [(v.game_id, v.version, v.message_id) for v in views] == [(1, 9, 77)]
    assert str(views[0].shown_at).startswith("2026-11-30 20:00:00.25")
    command.downgrade(config, BEFORE)
    with engine.connect() as connection:
        games = connection.execute(
            text("SELECT id, board_message_id, board_shown_at FROM games ORDER BY id")
        ).all()
        operations = connection.execute(text("SELECT count(*) FROM game_operations")).scalar()
    engine.dispose()
    assert [(g.id, g.board_message_id) for g in games] == [(1, 77), (2, None)]
    assert str(games[0].board_shown_at).startswith("2026-11-30 20:00:00.25")
    assert operations == 1
