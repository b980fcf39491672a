"""Failure boundaries end to end: what fails is answered, stays local, and is logged."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import text

from telesnap.emulator.testing import RunningEmulator
from telesnap.storage.database import create_engine

from .harness import (
    DatabaseOutage,
    Table,
    another_chat,
    database_file,
    handed_over_unconfirmed,
    table_with,
)

PRESS_FAILED = "⚠️ Something went wrong on my side. Please try again."
PRESS_FAILED_ES = "⚠️ Algo ha fallado por mi parte. Inténtalo de nuevo."


async def sql(database_url: str, statement: str, **values: object) -> list[tuple[object, ...]]:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            result = await connection.execute(text(statement), values)
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        await engine.dispose()


async def break_history(database_url: str, chat_id: int) -> None:
    """Store an operation of the chat's game that cannot be read back (a bug, a bad edit)."""
    await sql(
        database_url,
        'UPDATE game_operations SET payload = \'{"kind": "no_such_operation"}\' '
        "WHERE seq = 1 AND game_id IN (SELECT id FROM games WHERE chat_id = :chat)",
        chat=chat_id,
    )


async def flip_and_see(table: Table) -> None:
    """The player whose turn it is flips, and the chat sees the new board."""
    board = await table.latest_board()
    assert board.turn is not None
    toast = await table.press(board.turn, board.message, "Flip")
    assert toast.is_answered
    after = await table.next_board()
    assert f"{board.turn} flips" in after.message.text


async def test_a_press_and_a_command_whose_game_fails_to_replay_are_answered(
    emulator: RunningEmulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database_url = database_file(tmp_path)
    languages = {"Bob": "es"}
    async with table_with(emulator, database_url, ["Ann", "Bob"], languages=languages) as broken:
        healthy = await another_chat(broken, ["Cid", "Dan"])
        board = await broken.open_and_start(["Ann", "Bob"])
        await healthy.open_and_start(["Cid", "Dan"])
        await broken.stop_bot()
        await break_history(database_url, broken.chat_id)
        with caplog.at_level(logging.ERROR):
            await broken.start_bot()  # the broken game cannot be rebuilt; the others resume
            await healthy.wait_for_text("I am back")

            toast = await broken.press("Bob", board.message, "Snap!")
            assert toast.text == PRESS_FAILED_ES, "in the presser's language"
            # The failure's toast is retried like any other answer.
            await broken.client.inject_fault("answerCallbackQuery", "server_error")
            toast = await broken.press("Ann", board.message, "Flip")
            assert toast.text == PRESS_FAILED
            answers = await broken.client.calls("answerCallbackQuery")
            tries = [c for c in answers if c.params["callback_query_id"] == toast.callback_query_id]
            assert [c.fault for c in tries] == ["server_error", None]
            asked = await broken.command("Ann", "flip")
            reply = await broken.reply_to(asked)
            assert "Something went wrong on my side with /flip" in reply.text

            await flip_and_see(healthy)
            await flip_and_see(healthy)

        game_id = (
            await sql(database_url, "SELECT id FROM games WHERE chat_id = :c", c=broken.chat_id)
        )[0][0]
        failures = [
            r.getMessage() for r in caplog.records if r.name == "telesnap.bot.handlers.errors"
        ]
        assert len(failures) == 3
        assert all(f"chat {broken.chat_id}" in line for line in failures)
        assert all(f"game {game_id}" in line for line in failures)
        toasts = [t for t in await broken.client.toasts() if t.chat_id == broken.chat_id]
        assert all(t.is_answered for t in toasts), "every press answered, none twice"


async def test_a_press_during_a_database_outage_is_not_acknowledged_and_is_applied_after_it(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The inbox cannot store it, so Telegram is never told it arrived: it comes again,
    and once the database is back it is applied, once, and answered."""
    database_url = database_file(tmp_path)
    async with table_with(emulator, database_url, ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert table.runner is not None
        outage = DatabaseOutage(table.runner.engine)
        outage.active = True
        try:
            assert board.turn is not None
            query_id = await table.client.press(
                table.chat_id,
                board.message.message_id,
                table.players[board.turn],
                button_text="Flip",
            )
            await handed_over_unconfirmed(table.client, "callback_query")
            assert outage.failures > 0
        finally:
            outage.active = False
        toast = await table.client.wait_for_toast(callback_query_id=query_id)
        assert toast.is_answered
        assert toast.text != PRESS_FAILED
        after = await table.next_board()
        assert f"{board.turn} flips" in after.message.text
        await flip_and_see(table)
        flips = await sql(
            database_url,
            "SELECT count(*) FROM game_operations WHERE kind = 'card_flipped'",
        )
        assert flips == [(2,)], "the press from the outage applied once, and one more"
        outage.remove()


async def test_when_the_bot_is_removed_its_games_end_and_nothing_more_is_sent(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    database_url = database_file(tmp_path)
    async with table_with(emulator, database_url, ["Ann", "Bob", "Cid", "Dan"]) as removed:
        other = await another_chat(removed, ["Eve", "Fay"])
        await removed.open_and_start(["Ann", "Bob"])
        await other.open_and_start(["Eve", "Fay"])
        assert removed.runner is not None
        assert removed.runner.runtime is not None
        timers = "SELECT count(*) FROM timers WHERE chat_id = :c AND fired_at IS NULL"
        assert (await sql(database_url, timers, c=removed.chat_id))[0][0] > 0
        await removed.client.kick_bot(removed.chat_id)
        await removed.client.wait_until_idle()
        await removed.runner.runtime.settle()

        rows = await sql(
            database_url,
            "SELECT g.status, (SELECT count(*) FROM timers t WHERE t.game_id = g.id "
            "AND t.fired_at IS NULL), (SELECT kind FROM game_operations o WHERE o.game_id = g.id "
            "ORDER BY seq DESC LIMIT 1) FROM games g WHERE chat_id = :chat",
            chat=removed.chat_id,
        )
        assert rows == [("abandoned", 0, "game_ended")]
        sends = len(await removed.client.calls())
        await flip_and_see(other)
        calls = (await removed.client.calls())[sends:]
        assert all(call.params.get("chat_id") != removed.chat_id for call in calls)


async def test_a_403_on_a_send_ends_the_chats_games(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    database_url = database_file(tmp_path)
    async with table_with(emulator, database_url, ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert table.runner is not None
        assert table.runner.runtime is not None
        await table.client.inject_fault("sendMessage", "forbidden")
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        await table.client.wait_until_idle()
        await table.runner.runtime.settle()
        rows = await sql(
            database_url, "SELECT status FROM games WHERE chat_id = :c", c=table.chat_id
        )
        assert rows == [("abandoned",)]
        assert table.runner.runtime.senders.is_closed(table.chat_id)


async def test_stats_messages_keep_the_chats_language_after_a_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ana", "Bea"], languages={"Ana": "es", "Bea": "es"}
    ) as table:
        await table.command("Ana", "newgame")  # the opener's language becomes the chat's
        await table.wait_for_text("Snap")
        await table.stop_bot()
        await table.start_bot()
        asked = await table.command("Bea", "history")
        reply = await table.reply_to(asked)
        assert reply.text == "📜 Aún no ha terminado ninguna partida en este chat."
