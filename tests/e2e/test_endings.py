"""Every way a running game ends, named in its last message, on a clock the tests move."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with
from .test_timers import Clock, set_up

NAMES = ["Ann", "Bob"]
STOPPED = "🛑 Game #1 was stopped: nobody wins."


async def final_text(table: Table) -> str:
    board = await table.next_board()
    assert not board.message.buttons, board.message.text
    return board.message.text


async def test_the_time_limit_is_named(emulator: RunningEmulator, tmp_path: Path) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), NAMES, admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "turn_timer off", "time_limit 1")
        await table.open_and_start(NAMES)
        clock.advance(60)
        await table.fire_timers()
        text = await final_text(table)
    assert "⏱ Time is up!" in text
    assert "The time limit was reached: the most cards wins." in text.splitlines()


async def test_an_idle_game_is_named(emulator: RunningEmulator, tmp_path: Path) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), NAMES, admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "turn_timer off", "idle_limit 10")
        await table.open_and_start(NAMES)
        clock.advance(600)
        await table.fire_timers()
        text = await final_text(table)
    lines = text.splitlines()
    idle = "💤 Nobody has played for a long time: the game is abandoned."
    assert lines[: lines.index(STOPPED)] == [idle, ""], "said once, then the standings"


async def test_endgame_names_who_stopped_it(emulator: RunningEmulator, tmp_path: Path) -> None:
    async with table_with(emulator, database_file(tmp_path), NAMES, admins=["Ann"]) as table:
        await table.open_and_start(NAMES)
        await table.command("Ann", "endgame")
        text = await final_text(table)
    lines = text.splitlines()
    stopped = "🛑 Ann stopped the game with /endgame."
    assert lines[: lines.index(STOPPED)] == [stopped, ""], "said once, then the standings"
