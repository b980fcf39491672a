"""Workers killed, restarted and racing each other during fast play: nothing lost, nothing twice."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from telesnap.emulator.client import Press
from tests.e2e.harness import Board, Table
from tests.multiworker.play import (
    PlayLog,
    exactly_once_problems,
    history_problems,
    open_table,
    play_fast,
    stored_histories,
)
from tests.multiworker.processes import Deployment, Worker, deployment, routed_updates

NAMES = ["Ann", "Bob", "Cid"]
KILLS = 30
KILL_EVERY_S = 2.0
"""The pace of the kills: the workload, not a wait for something to happen."""


async def open_games(running: Deployment, database_url: str, count: int) -> list[Table]:
    tables = [await open_table(running.client, database_url, NAMES) for _ in range(count)]
    await asyncio.gather(*(table.open_and_start(NAMES, limit_s=30) for table in tables))
    return tables


async def check_nothing_lost_or_repeated(
    running: Deployment, database_url: str, log: PlayLog
) -> None:
    await running.client.wait_until_idle(quiet=1.0, timeout=120)
    histories = await stored_histories(database_url)
    problems = [
        *log.stalls,
        *await exactly_once_problems(running.client, log, histories),
        *await history_problems(running.client, histories),
    ]
    assert problems == [], "\n".join(problems) + "\n" + running.logs()


async def kill_and_restart(workers: list[Worker], kills: int, rng: random.Random) -> None:
    """kill -9 a random running worker every KILL_EVERY_S, ``kills`` times; restart each."""
    restarts: set[asyncio.Task[None]] = set()
    for _ in range(kills):
        await asyncio.sleep(KILL_EVERY_S)  # the pace of the workload
        up = [
            w
            for w in workers
            if w.returncode is None
            and not any(getattr(task, "worker", None) is w for task in restarts)
        ]
        victim = rng.choice(up or workers)
        await victim.kill()
        task = asyncio.create_task(victim.restart())
        task.worker = victim  # type: ignore[attr-defined]
        restarts.add(task)
        task.add_done_callback(restarts.discard)
        if len(up) <= 1:
            await task  # never all of them down at once for long
    await asyncio.gather(*restarts)


async def test_thirty_kills_of_random_workers_during_ten_fast_games_lose_and_repeat_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    async with deployment(tmp_path, postgres_url, workers=3, flood_limits=True) as running:
        tables = await open_games(running, postgres_url, 10)
        log = PlayLog()
        stop = asyncio.Event()
        players = [
            asyncio.create_task(play_fast(table, stop, log, seed=n, press_timeout_s=60))
            for n, table in enumerate(tables)
        ]
        await kill_and_restart(running.workers, KILLS, random.Random(13))
        stop.set()
        await asyncio.gather(*players)
        assert sum(worker.kills for worker in running.workers) == KILLS
        assert len(log.presses) >= 5 * len(tables), "the kills met too little play"
        await check_nothing_lost_or_repeated(running, postgres_url, log)
        floods = [v for v in await running.client.violations() if v.status == 429]
        assert floods == [], "Telegram's limits were broken between the workers"


async def flip_until_a_match(table: Table, board: Board, limit: int = 80) -> Board:
    """Have the player whose turn it is flip until a board shows a match."""
    for _ in range(limit):
        if board.has_match:
            return board
        assert board.turn is not None, board.message.text
        await table.press_action(board.turn, board.message, "f")
        board = await table.next_board(limit_s=30)
    raise AssertionError(f"no match in {limit} flips")


async def test_a_race_whose_calls_two_workers_handle_is_decided_once_as_a_tie(
    tmp_path: Path, postgres_url: str
) -> None:
    async with deployment(tmp_path, postgres_url, workers=3) as running:
        table = await open_table(running.client, postgres_url, NAMES, admins=["Ann"])
        # Two presses sent together reach two workers through nginx: on a loaded machine
        # their receipts can be more than the default 100 ms apart, so the window is 2 s.
        await table.command("Ann", "settings", "tie_window 2000")
        await table.wait_for_text("Saved.", 30)
        await table.open_and_start(NAMES, limit_s=30)
        board = await flip_until_a_match(table, await table.latest_board())
        snap = next(
            button["callback_data"]
            for row in board.message.buttons
            for button in row
            if button["callback_data"].startswith("s:")
        )
        first, second = await running.client.press_many(
            [
                Press(table.chat_id, board.message.message_id, table.players[name], data=snap)
                for name in ("Ann", "Bob")
            ]
        )
        tie = await table.wait_for_text("called together: the piles go into the Snap Pot", 30)
        assert "Snap Pot:" in tie.text
        await running.client.wait_until_idle(quiet=0.5, timeout=30)

        update_of = {
            record.payload["callback_query"]["id"]: record.update_id
            for record in await running.client.updates()
            if "callback_query" in record.payload
        }
        routes = routed_updates(running.access_log)
        handled_by = {routes[update_of[query]][-1] for query in (first, second)}
        assert len(handled_by) == 2, f"both calls went to {handled_by}"
        (history,) = await stored_histories(postgres_url)
        races = [payload for kind, payload, _ in history.operations if kind == "race_resolved"]
        assert len(races) == 1
        assert sorted(races[0]["winners"]) == [0, 1], races  # Ann and Bob, together
        calls = [u for kind, _, u in history.operations if kind == "snap_called"]
        assert sorted(calls) == sorted(update_of[q] for q in (first, second))
        for query in (first, second):
            toast = await running.client.wait_for_toast(callback_query_id=query, timeout=10)
            assert toast.text == "🤝 A tie: the piles go into the Snap Pot.", toast


async def test_a_rolling_restart_of_every_worker_mid_game_loses_no_press(
    tmp_path: Path, postgres_url: str
) -> None:
    async with deployment(tmp_path, postgres_url, workers=3) as running:
        tables = await open_games(running, postgres_url, 3)
        log = PlayLog()
        stop = asyncio.Event()
        players = [
            asyncio.create_task(play_fast(table, stop, log, seed=n))
            for n, table in enumerate(tables)
        ]
        for worker in running.workers:  # one at a time: SIGTERM, wait for it, start it again
            assert await worker.terminate() == 0, worker.log_tail()
            await worker.restart()
        stop.set()
        await asyncio.gather(*players)
        assert len(log.presses) >= 3 * len(running.workers)
        await check_nothing_lost_or_repeated(running, postgres_url, log)
        assert await running.client.violations() == []


async def test_one_process_on_sqlite_killed_thirty_times_in_six_chats_loses_no_press(
    tmp_path: Path,
) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'one.db'}"
    async with deployment(tmp_path, database_url, workers=1, webhook=False) as running:
        tables = await open_games(running, database_url, 6)
        log = PlayLog()
        stop = asyncio.Event()
        players = [
            asyncio.create_task(play_fast(table, stop, log, seed=n, press_timeout_s=60))
            for n, table in enumerate(tables)
        ]
        (bot,) = running.workers
        for _ in range(KILLS):
            await asyncio.sleep(KILL_EVERY_S / 2)  # the pace of the workload (and a restart)
            await bot.kill()
            await bot.restart()
        stop.set()
        await asyncio.gather(*players)
        assert bot.kills == KILLS
        assert len(log.presses) >= 5 * len(tables), "the kills met too little play"
        await check_nothing_lost_or_repeated(running, database_url, log)
