"""Turn timers, absent players and expiring lobbies, on a clock the tests move."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


async def set_up(table: Table, *settings: str) -> None:
    for setting in settings:
        await table.command("Ann", "settings", setting)
        await table.wait_for_text(f"{setting.split()[0]}")
    await table.client.wait_until_idle()


async def test_a_reminder_mentions_the_player_then_the_bot_flips_for_them(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "turn_timer 60")
        board = await table.open_and_start(["Ann", "Bob", "Cid"])
        away = board.turn
        assert away is not None
        clock.advance(60)
        await table.fire_timers()
        reminder = await table.wait_for_text("it is your turn")
        assert away in reminder.text
        links = [e for e in reminder.entities if e["type"] == "text_link"]
        assert links == [{**links[0], "url": f"tg://user?id={table.players[away]}"}]
        clock.advance(60)
        await table.fire_timers()
        flipped = await table.next_board()
        assert f"{away} was away, so I flipped for them." in flipped.message.text
        assert f"{away} flips" in flipped.message.text
        assert flipped.turn != away


async def test_an_absent_player_is_removed_after_the_afk_limit(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "turn_timer 30", "afk_limit 1", "when_away skip")
        board = await table.open_and_start(["Ann", "Bob", "Cid"])
        away = board.turn
        assert away is not None
        clock.advance(30)
        await table.fire_timers()
        clock.advance(30)
        await table.fire_timers()
        removed = await table.next_board()
        assert f"{away} was away, so their turn is skipped." in removed.message.text
        assert f"{away} was away too long and is removed." in removed.message.text
        assert f"{away}: left" in removed.message.text
        assert len(removed.tops) == 2


async def test_a_lobby_nobody_starts_expires_and_frees_the_chat(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "lobby_expiry 10")
        await table.command("Bob", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        clock.advance(600)
        await table.fire_timers()
        await table.wait_for_text("the lobby is closed")
        await table.client.wait_until_idle()
        closed = next(m for m in await table.messages() if m.message_id == lobby.message_id)
        assert closed.text == "This game was called off."
        assert closed.reply_markup is None
        await table.command("Ann", "newgame")
        await table.client.wait_for_message(
            table.chat_id,
            lambda m: "A game of Snap is starting" in m.text and m.message_id != lobby.message_id,
        )


async def test_killing_the_bot_between_reminder_and_expiry_loses_no_timer(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "turn_timer 60")
        board = await table.open_and_start(["Ann", "Bob"])
        away = board.turn
        clock.advance(60)
        await table.fire_timers()
        await table.wait_for_text("it is your turn")
        await table.stop_bot()
        await table.start_bot()
        await table.next_board()  # the table posted again after the restart
        clock.advance(60)
        await table.fire_timers()
        await table.fire_timers()
        flipped = await table.next_board()
        assert f"{away} was away, so I flipped for them." in flipped.message.text
        await table.client.wait_until_idle()
        texts = [m.text for m in await table.messages()]
        assert sum("it is your turn" in text for text in texts) == 1
        assert sum("I flipped for them" in text for text in texts) == 1


def count_rows(database: Path, table: str) -> int:
    with closing(sqlite3.connect(database)) as connection:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


async def test_bookkeeping_is_forgotten_two_days_on(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()
    clock.now = datetime.now(UTC)  # the marks are stamped with the real time
    database = tmp_path / "e2e.db"
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "lobby_expiry 10")
        await table.command("Bob", "newgame")
        await table.wait_for_text("A game of Snap is starting")
        clock.advance(600)
        await table.fire_timers()
        await table.wait_for_text("the lobby is closed")
        assert count_rows(database, "inbox") == 2, "the /settings and the /newgame, received"
        assert count_rows(database, "timers") == 1, "the lobby's expiry, fired"

        clock.advance(2 * 24 * 3600 + 1)
        await table.fire_timers()
        assert count_rows(database, "inbox") == 0
        assert count_rows(database, "timers") == 0
        await table.command("Ann", "newgame")
        await table.wait_for_text("Players (1/12)")
