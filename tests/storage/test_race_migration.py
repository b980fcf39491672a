"""The races migration: a race a stop for the upgrade interrupted gets its row."""

from __future__ import annotations

from sqlalchemy import text

from telesnap.storage.database import create_engine
from telesnap.storage.migrate import upgrade_database

BEFORE_RACES = "73228d083249"
NOW = "'2026-11-30 12:00:00+00:00'"


async def test_a_running_game_whose_last_operation_is_a_call_gets_an_open_race(
    database_url: str,
) -> None:
    await upgrade_database(database_url, BEFORE_RACES)
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO chats (id, type, is_forum, created_at) "
                    f"VALUES (-5, 'group', false, {NOW})"
                )
            )
            await connection.execute(
                text(
                    "INSERT INTO users (id, first_name, created_at, updated_at) "
                    f"VALUES (1, 'Ann', {NOW}, {NOW})"
                )
            )
            # Game 1 stopped in the middle of a race; game 2 between flips; game 3 is over.
            for game_id, status, last_kind in (
                (1, "running", "snap_called"),
                (2, "running", "card_flipped"),
                (3, "finished", "snap_called"),
            ):
                await connection.execute(
                    text(
                        "INSERT INTO games (id, chat_id, thread_id, status, creator_id, settings, "
                        "board_version, history_length, created_at, last_action_at) VALUES "
                        f"({game_id}, -5, {game_id}, '{status}', 1, '{{}}', 3, 2, {NOW}, {NOW})"
                    )
                )
                for seq, kind in ((1, "cards_dealt"), (2, last_kind)):
                    await connection.execute(
                        text(
                            "INSERT INTO game_operations "
                            "(game_id, seq, kind, payload, recorded_at) VALUES "
                            f" ({game_id}, {seq}, '{kind}', '{{}}', {NOW})"
                        )
                    )
        await upgrade_database(database_url)
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    text("SELECT game_id, chat_id, thread_id, state, opened_seq FROM races")
                )
            ).all()
    finally:
        await engine.dispose()
    assert [tuple(row) for row in rows] == [(1, -5, 1, "open", 2)]
