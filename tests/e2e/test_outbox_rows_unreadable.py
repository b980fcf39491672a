"""An outbox row whose payload is not the shape its kind needs is set aside; the chat goes on.

Such a row (a newer version's, a bad edit) is JSON, but not an object: reading it back must
fail the way any unreadable row does, so it is marked failed and the chat's later rows go out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from telesnap.emulator.testing import RunningEmulator
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models.outbox import OutboxMessage

from .harness import database_file, table_with
from .test_failures import sql

NOT_OBJECTS = [[1, 2, 3], "x", 7, None]


async def _add_rows(database_url: str, rows: list[OutboxMessage]) -> None:
    """Write outbox rows behind the bot's back (the bot is stopped)."""
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            session.add_all(rows)
            await session.commit()
    finally:
        await engine.dispose()


@pytest.mark.parametrize("payload", NOT_OBJECTS[:2], ids=repr)
async def test_a_notice_whose_payload_is_not_an_object_is_set_aside(
    emulator: RunningEmulator, tmp_path: Path, payload: Any
) -> None:
    database_url = database_file(tmp_path)
    async with table_with(emulator, database_url, ["Ann", "Bob"]) as table:
        await table.open_and_start(["Ann", "Bob"])
        await table.client.wait_until_idle()
        await table.stop_bot()
        notice = {"notice": {"kind": "called_off", "args": {}}, "reply_to": None}
        await _add_rows(
            database_url,
            [
                OutboxMessage(chat_id=table.chat_id, thread_id=0, kind="notice", payload=payload),
                OutboxMessage(chat_id=table.chat_id, thread_id=0, kind="notice", payload=notice),
            ],
        )
        await table.start_bot()
        await table.wait_for_text("called off", limit_s=15)
    states = await sql(
        database_url,
        "SELECT state, error FROM outbox_messages WHERE kind = 'notice' ORDER BY id",
    )
    assert states == [("failed", "unreadable"), ("sent", None)]


@pytest.mark.parametrize("payload", NOT_OBJECTS, ids=repr)
async def test_a_board_whose_payload_is_not_an_object_is_set_aside(
    emulator: RunningEmulator, tmp_path: Path, payload: Any
) -> None:
    """The game's next board (the table shown again at the restart) still goes out."""
    database_url = database_file(tmp_path)
    async with table_with(emulator, database_url, ["Ann", "Bob"]) as table:
        await table.open_and_start(["Ann", "Bob"])
        await table.client.wait_until_idle()
        await table.stop_bot()
        ((game_id,),) = await sql(database_url, "SELECT id FROM games")
        broken = OutboxMessage(
            chat_id=table.chat_id,
            thread_id=0,
            kind="board",
            game_id=game_id,
            board_version=99,
            payload=payload,
        )
        await _add_rows(database_url, [broken])
        await table.start_bot()
        await table.wait_for_text("I am back", limit_s=15)
    states = await sql(
        database_url,
        "SELECT state FROM outbox_messages WHERE board_version = 99",
    )
    assert states == [("failed",)]
