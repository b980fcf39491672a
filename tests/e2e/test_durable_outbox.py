"""What a committed change must show survives the bot's death: it appears after the restart."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from sqlalchemy import text

from telesnap.emulator.testing import RunningEmulator
from telesnap.storage.database import create_engine

from .harness import Table, database_file
from .test_resilience import bot_process

FLIP = re.compile(r"^(\w+) flips ", re.MULTILINE)
STOPPED = "The game was stopped. Nobody wins."


async def _unsent_boards(database_url: str, count: int) -> bool | None:
    """True once ``count`` boards are committed and not sent (None until then)."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            unsent = await connection.scalar(
                text("SELECT count(*) FROM outbox_messages WHERE state = 'pending'")
            )
    finally:
        await engine.dispose()
    return True if unsent is not None and unsent >= count else None


async def _crashy_table(emulator: RunningEmulator, tmp_path: Path) -> Table:
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat(
        "group", title="Crashy", members=list(users.values()), admins=[users["Ann"]]
    )
    return Table(emulator, database_file(tmp_path), int(chat["id"]), users)


async def test_a_flip_and_the_end_of_a_game_committed_before_a_kill_appear_once_after_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    table = await _crashy_table(emulator, tmp_path)
    client = emulator.client
    log = tmp_path / "bot.log"
    async with bot_process(emulator, table.database_url, log) as process:
        board = await table.open_and_start(["Ann", "Bob"])
        flipper = board.turn
        assert flipper is not None
        # From now on Telegram takes every message and never answers: nothing gets out.
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await table.command(flipper, "flip")
        await table.command("Ann", "endgame")
        await client.wait_for(
            lambda: _unsent_boards(table.database_url, 2), what="both boards committed"
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    async with bot_process(emulator, table.database_url, log):
        ended = await table.wait_for_text(STOPPED, limit_s=20)
        await client.wait_until_idle()
        texts = [message.text for message in await table.messages()]
    assert sum(STOPPED in text for text in texts) == 1, "the end appears once"
    assert FLIP.findall(ended.text) == [flipper], "the flip is shown with it"
    assert ended.text.index(f"{flipper} flips") < ended.text.index(STOPPED), "in their order"
    assert sum(len(FLIP.findall(text)) for text in texts) == 1, "the flip appears once"
    assert await _unsent_boards(table.database_url, 1) is None, "nothing is left unsent"


async def test_unsent_boards_of_a_running_game_are_merged_into_one_after_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    table = await _crashy_table(emulator, tmp_path)
    client = emulator.client
    log = tmp_path / "bot.log"
    async with bot_process(emulator, table.database_url, log) as process:
        board = await table.open_and_start(["Ann", "Bob"])
        first = board.turn
        assert first is not None
        second = "Bob" if first == "Ann" else "Ann"
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await table.command(first, "flip")
        await table.command(second, "flip")
        await client.wait_for(
            lambda: _unsent_boards(table.database_url, 2), what="both boards committed"
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    async with bot_process(emulator, table.database_url, log):
        await table.wait_for_text("I am back", limit_s=20)
        resumed = await table.next_board(limit_s=20)
        await client.wait_until_idle()
        boards = [m for m in await table.messages() if "face-down" in m.text]
    assert FLIP.findall(resumed.message.text) == [first, second], "both flips, in order"
    assert resumed.turn == first, "the table after both flips"
    assert boards[-1].message_id == resumed.message.message_id, "one board after the restart"
    assert sum(len(FLIP.findall(m.text)) for m in boards) == 2, "each flip shown once"
