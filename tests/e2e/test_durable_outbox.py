"""What a committed change must show survives the bot's death: it appears after the restart."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from telesnap.app import BotRunner
from telesnap.config import Settings
from telesnap.emulator.testing import RunningEmulator
from telesnap.storage.database import create_engine

from .harness import NO_FLOOD, Table, database_file
from .test_resilience import bot_process

FLIP = re.compile(r"^(\w+) flips ", re.MULTILINE)
STOPPED = "🛑 Game #1 was stopped: nobody wins."


async def _unsent_operations(database_url: str) -> list[str]:
    """The kinds of the operations that committed boards not yet sent show, in order."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT payload FROM outbox_messages WHERE state = 'pending' ORDER BY id")
            )
            payloads = [row[0] for row in rows]
    finally:
        await engine.dispose()
    return [
        op["kind"]
        for payload in payloads
        for op in (json.loads(payload) if isinstance(payload, str) else payload)["operations"]
    ]


def _unsent(database_url: str, *kinds: str) -> Callable[[], Awaitable[bool | None]]:
    """A probe: True once the unsent boards show exactly these operations (None until then)."""

    async def probe() -> bool | None:
        return True if await _unsent_operations(database_url) == list(kinds) else None

    return probe


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
        await client.wait_for(_unsent(table.database_url), what="the first board marked sent")
        # From now on Telegram takes every message and never answers: nothing gets out.
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await table.command(flipper, "flip")
        await table.command("Ann", "endgame")
        await client.wait_for(
            _unsent(table.database_url, "card_flipped", "game_ended"),
            what="both boards committed",
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    async with bot_process(emulator, table.database_url, log):
        ended = await table.wait_for_text(STOPPED, limit_s=20)
        # The rows are marked sent just after Telegram takes the message: the process
        # is killed below, so it must have stored that first (or they would go again).
        await client.wait_for(_unsent(table.database_url), what="nothing is left unsent")
        await client.wait_until_idle()
        texts = [message.text for message in await table.messages()]
    assert sum(STOPPED in text for text in texts) == 1, "the end appears once"
    assert FLIP.findall(ended.text) == [flipper], "the flip is shown with it"
    assert ended.text.index(f"{flipper} flips") < ended.text.index(STOPPED), "in their order"
    assert sum(len(FLIP.findall(text)) for text in texts) == 1, "the flip appears once"


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
        await client.wait_for(_unsent(table.database_url), what="the first board marked sent")
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await table.command(first, "flip")
        await table.command(second, "flip")
        await client.wait_for(
            _unsent(table.database_url, "card_flipped", "card_flipped"),
            what="both boards committed",
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


async def test_another_worker_takes_over_a_dead_workers_boards(
    emulator: RunningEmulator, database_url: str, tmp_path: Path
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("one process on SQLite: a restart takes its chats over at once (see above)")
    table = await _crashy_table(emulator, tmp_path)
    table.database_url = database_url
    client = emulator.client
    async with bot_process(emulator, database_url, tmp_path / "bot.log") as process:
        board = await table.open_and_start(["Ann", "Bob"])
        flipper = board.turn
        assert flipper is not None
        await client.wait_for(_unsent(database_url), what="the first board marked sent")
        await client.inject_fault("sendMessage", "timeout", count=1_000, hold=2.0)
        await table.command(flipper, "flip")
        await client.wait_for(_unsent(database_url, "card_flipped"), what="the flip committed")
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    # The dead worker's lease of the chat went with its connection.
    settings = Settings(token=emulator.token, api_url=emulator.url, database_url=database_url)
    other = BotRunner(
        settings,
        limits=NO_FLOOD,
        shuffle_seed=7,
        resume=False,  # a worker that was running all along: only its look-out sends
        takeover_grace=timedelta(0),
        takeover_every_s=0.2,
    )
    await other.start()

    async def flip_shown() -> bool | None:
        texts = [message.text for message in await table.messages()]
        return True if any(FLIP.search(text) for text in texts) else None

    try:
        await client.wait_for(flip_shown, timeout=20, what="the flip shown")
        await client.wait_until_idle()
        texts = [message.text for message in await table.messages()]
    finally:
        await other.stop()
    assert [FLIP.findall(text) for text in texts if FLIP.search(text)] == [[flipper]]
    assert await _unsent_operations(database_url) == []
