"""A lobby change and a reminder committed before a kill -9 appear once after the restart."""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from sqlalchemy import text

from telesnap.emulator.testing import RunningEmulator
from telesnap.storage.database import create_engine

from .test_durable_outbox import _crashy_table
from .test_resilience import bot_process

LOBBY = "A game of Snap is starting"
REMINDER = "it is your turn"


async def _unsent_kinds(database_url: str) -> list[str]:
    """The kinds of the outbox rows not yet sent, in their order."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT kind FROM outbox_messages WHERE state = 'pending' ORDER BY id")
            )
            return [row[0] for row in rows]
    finally:
        await engine.dispose()


def _unsent(database_url: str, *kinds: str) -> Callable[[], Awaitable[bool | None]]:
    """A probe: True once the unsent rows are exactly of these kinds (None until then)."""

    async def probe() -> bool | None:
        return True if await _unsent_kinds(database_url) == list(kinds) else None

    return probe


async def test_a_join_committed_before_a_kill_edits_the_one_lobby_message_after_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    table = await _crashy_table(emulator, tmp_path)
    client = emulator.client
    log = tmp_path / "bot.log"
    async with bot_process(emulator, table.database_url, log) as process:
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text(LOBBY, limit_s=20)
        await client.wait_for(_unsent(table.database_url), what="the lobby marked sent")
        # From now on Telegram takes no edit: the join's lobby edit cannot get out.
        await client.inject_fault("editMessageText", "timeout", count=1_000, hold=2.0)
        await table.press("Bob", lobby, "Join")
        await client.wait_for(_unsent(table.database_url, "lobby"), what="the join committed")
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    assert "Bob" not in next(m for m in await table.messages() if LOBBY in m.text).text
    async with bot_process(emulator, table.database_url, log):
        await client.wait_for(_unsent(table.database_url), what="the lobby shown again")
        await client.wait_until_idle()
        lobbies = [m for m in await table.messages() if LOBBY in m.text]
    assert [m.message_id for m in lobbies] == [lobby.message_id], "one lobby message, edited"
    assert "Bob" in lobbies[0].text, "the join committed before the kill is shown"


async def test_a_reminder_committed_before_a_kill_appears_once_after_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    table = await _crashy_table(emulator, tmp_path)
    client = emulator.client
    log = tmp_path / "bot.log"
    async with bot_process(emulator, table.database_url, log) as process:
        await table.command("Ann", "settings", "turn_timer 10")
        await table.wait_for_text("Saved.", limit_s=20)
        board = await table.open_and_start(["Ann", "Bob"], limit_s=20)
        away = board.turn
        assert away is not None
        await client.wait_for(_unsent(table.database_url), what="the first board marked sent")
        # From now on Telegram takes no message: the reminder cannot get out.
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await client.wait_for(
            _unsent(table.database_url, "notice"), what="the reminder committed", timeout=30
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    assert not [m for m in await table.messages() if REMINDER in m.text]
    async with bot_process(emulator, table.database_url, log):
        reminder = await table.wait_for_text(REMINDER, limit_s=20)
        await table.wait_for_text("I am back", limit_s=20)
        await client.wait_until_idle()
        texts = [m.text for m in await table.messages()]
    assert away in reminder.text, "it names the player whose turn it is"
    assert sum(REMINDER in t for t in texts) == 1, "the reminder appears once"
    first_board = next(i for i, t in enumerate(texts) if "face-down" in t)
    assert first_board < texts.index(reminder.text), "after the board it is about"
