"""Faults, restarts, forum topics and webhooks, through the emulator."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy import text

from telesnap.app import BotRunner, Webhook
from telesnap.config import ConfigError, Settings
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.server import EmulatorServer
from telesnap.emulator.testing import RunningEmulator
from telesnap.game import Game, operation_from_json
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.uow import UnitOfWork
from tests.multiworker.processes import BotParent, ForkedProcess

from .harness import NO_FLOOD, Table, database_file, table_with


async def test_a_429_and_a_500_on_send_message_lose_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        for fault in ("retry_after", "server_error"):
            await table.client.inject_fault("sendMessage", fault, retry_after=1)
            assert board.turn is not None
            flipper = board.turn
            await table.press(flipper, board.message, "Flip")
            board = await table.next_board(limit_s=15)
            assert f"{flipper} flips" in board.message.text
        failed = [c for c in await table.client.calls("sendMessage") if c.fault]
        assert len(failed) == 2


async def test_games_in_two_forum_topics_run_at_once(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid", "Dan"], forum_topic="Table A"
    ) as table_a:
        topic_b = await table_a.client.create_topic(table_a.chat_id, "Table B")
        table_b = Table(
            emulator, table_a.database_url, table_a.chat_id, table_a.players, thread_id=topic_b
        )
        board_a = await table_a.open_and_start(["Ann", "Bob"])
        board_b = await table_b.open_and_start(["Cid", "Dan"])
        assert set(board_a.tops) == {"Ann", "Bob"}
        assert set(board_b.tops) == {"Cid", "Dan"}
        assert board_a.message.message_thread_id == table_a.thread_id
        assert board_b.message.message_thread_id == topic_b
        assert board_b.turn is not None
        await table_b.press(board_b.turn, board_b.message, "Flip")
        after_b = await table_b.next_board()
        assert after_b.message.message_thread_id == topic_b
        for message in await table_a.client.transcript(table_a.chat_id):
            assert message.message_thread_id in (table_a.thread_id, topic_b)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_webhook_mode_plays_and_refuses_a_wrong_secret(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram"
    settings = Settings(
        token=emulator.token, api_url=emulator.url, database_url=database_file(tmp_path)
    )
    runner = BotRunner(
        settings, limits=NO_FLOOD, shuffle_seed=7, webhook=Webhook(url, "127.0.0.1", port, "s3cret")
    )
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat("group", title="Hooked", members=list(users.values()))
    table = Table(emulator, settings.database_url, int(chat["id"]), users)
    await runner.start()
    try:
        board = await table.open_and_start(["Ann", "Bob"])
        assert set(board.tops) == {"Ann", "Bob"}
        deliveries = [d.via for u in await client.updates() for d in u.deliveries]
        assert deliveries
        assert set(deliveries) == {"webhook"}
        async with aiohttp.ClientSession() as session:
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
                async with session.post(url, json={"update_id": 1}, headers=headers) as reply:
                    assert reply.status == 403
    finally:
        await runner.stop()


@asynccontextmanager
async def bot_process(
    emulator: RunningEmulator, database_url: str, log: Path, *, flood_control: bool = False
) -> AsyncIterator[ForkedProcess]:
    """``telesnap run`` in a process of its own (forked by the bot parent), until the block ends."""
    env = {
        **os.environ,
        "TELESNAP_TOKEN": emulator.token,
        "TELESNAP_API_URL": emulator.url,
        "TELESNAP_DATABASE_URL": database_url,
        "TELESNAP_SHUFFLE_SEED": "7",
        "TELESNAP_FLOOD_CONTROL": "on" if flood_control else "off",
    }
    process = await BotParent.get().start(["run"], log, env, log.parent)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def test_killing_the_bot_mid_game_and_mid_race_loses_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat(
        "group", title="Crashy", members=list(users.values()), admins=[users["Ann"]]
    )
    database_url = database_file(tmp_path)
    table = Table(emulator, database_url, int(chat["id"]), users)
    log = tmp_path / "bot.log"
    async with bot_process(emulator, database_url, log) as process:
        await table.command("Ann", "settings", "tie_window 2000")
        await table.wait_for_text("Saved.", limit_s=20)
        board = await table.open_and_start(["Ann", "Bob"])
        while not board.has_match:
            assert board.turn is not None
            await table.press(board.turn, board.message, "Flip")
            board = await table.next_board()
        await client.press(
            table.chat_id, board.message.message_id, users["Bob"], button_text="Snap!"
        )
        await client.wait_for(lambda: _calls_recorded(database_url), what="the call to be stored")
        # The race's 2 s tie window is still open: the bot dies in the middle of it.
        process.send_signal(signal.SIGKILL)
        await process.wait()
    async with bot_process(emulator, database_url, log):
        decided = await table.wait_for_text("Bob wins the Snap", limit_s=20)
        assert "face-down" in decided.text
        resumed = await table.next_board(limit_s=20)
        assert resumed.turn is not None
        await table.press(resumed.turn, resumed.message, "Flip")
        await table.next_board()
    await assert_history_replays(database_url)


async def _calls_recorded(database_url: str) -> bool | None:
    """True once a Snap call is in the stored history (None until then)."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            count = await connection.scalar(
                text("SELECT count(*) FROM game_operations WHERE kind = 'snap_called'")
            )
    finally:
        await engine.dispose()
    return True if count else None


async def assert_history_replays(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            (game,) = await uow.games.list_running()
            rows = await uow.history.load(game.id)
            replayed = Game.replay(operation_from_json(row.payload) for row in rows)
            assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
            assert not replayed.is_over
            assert sum(1 for row in rows if row.kind == "race_resolved") == 1
    finally:
        await engine.dispose()


async def test_the_bot_waits_for_an_unreachable_bot_api_then_starts(tmp_path: Path) -> None:
    port = free_port()
    config = EmulatorConfig()
    settings = Settings(
        token=config.token, api_url=f"http://127.0.0.1:{port}", database_url=database_file(tmp_path)
    )
    runner = BotRunner(settings, limits=NO_FLOOD)
    starting = asyncio.create_task(runner.start())
    try:
        server = EmulatorServer(config)
        await server.start("127.0.0.1", port)  # the Bot API comes up after the bot
        try:
            await asyncio.wait_for(starting, 30)
            assert runner.application is not None
            assert runner.application.bot.username == config.bot_username
        finally:
            await runner.stop()
            await server.stop()
    finally:
        starting.cancel()


async def test_a_refused_token_stops_the_bot_with_a_clear_error(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    settings = Settings(
        token="42:not-the-emulator-token",
        api_url=emulator.url,
        database_url=database_file(tmp_path),
    )
    runner = BotRunner(settings, limits=NO_FLOOD)
    try:
        with pytest.raises(ConfigError, match="TELESNAP_TOKEN was refused"):
            await runner.start()
    finally:
        await runner.stop()


async def test_sigterm_stops_a_bot_still_waiting_for_the_bot_api(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TELESNAP_TOKEN": EmulatorConfig().token,
        "TELESNAP_API_URL": f"http://127.0.0.1:{free_port()}",
        "TELESNAP_DATABASE_URL": database_file(tmp_path),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "telesnap", "run", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        line = b""
        while b"the Bot API is unreachable" not in line:
            line = await asyncio.wait_for(process.stdout.readline(), 30)
            assert line, "the bot exited before trying the Bot API"
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.stdout.read(), 15)
        assert await asyncio.wait_for(process.wait(), 15) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_worker_started_with_no_resume_leaves_the_running_games_alone(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        await table.stop_bot()
        await table.start_bot(resume=False)
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        await table.next_board()
        texts = [m.text for m in await table.messages()]
        assert not any("I am back" in text for text in texts), "nothing posted at start"

        await table.stop_bot()
        await table.start_bot()
        await table.wait_for_text("I am back: the game goes on.")
        resumed = await table.next_board()
        assert resumed.turn is not None


async def test_a_stop_and_start_answers_no_press_twice(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """A start answers the presses a kill may have left unanswered, not those of a stop."""
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        await table.next_board()
        await table.stop_bot()
        await table.start_bot()
        await table.wait_for_text("I am back: the game goes on.")
        await emulator.client.wait_until_idle()
    assert await emulator.client.violations() == [], "no press answered a second time"


async def test_a_stopping_webhook_bot_answers_503_while_it_drains(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram"
    settings = Settings(
        token=emulator.token, api_url=emulator.url, database_url=database_file(tmp_path)
    )
    runner = BotRunner(
        settings, limits=NO_FLOOD, shuffle_seed=7, webhook=Webhook(url, "127.0.0.1", port, "s3cret")
    )
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat("group", title="Draining", members=list(users.values()))
    table = Table(emulator, settings.database_url, int(chat["id"]), users)
    await runner.start()
    stopping: asyncio.Task[None] | None = None
    try:
        await table.open_and_start(["Ann", "Bob"])
        dispatcher = runner.dispatcher
        assert dispatcher is not None
        draining, release = asyncio.Event(), asyncio.Event()
        finish_taken = dispatcher.drain

        async def held_drain() -> None:
            draining.set()
            await release.wait()  # the drain is held open while the test looks
            await finish_taken()

        monkeypatch.setattr(dispatcher, "drain", held_drain)
        stopping = asyncio.create_task(runner.stop())
        async with asyncio.timeout(10):
            await draining.wait()
        headers = {"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, json={"update_id": 99_999}, headers=headers) as reply,
        ):
            assert reply.status == 503, "delivered elsewhere, or again later"
        release.set()
        async with asyncio.timeout(30):
            await stopping
    finally:
        if stopping is None:
            await runner.stop()
    engine = create_engine(settings.database_url)
    try:
        async with engine.connect() as connection:
            stored = await connection.scalar(
                text("SELECT count(*) FROM inbox WHERE update_id = 99999")
            )
            pending = await connection.scalar(
                text("SELECT count(*) FROM inbox WHERE processed_at IS NULL")
            )
    finally:
        await engine.dispose()
    assert stored == 0, "refused, so not stored"
    assert pending == 0, "what was taken before the stop was finished"
