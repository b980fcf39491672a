"""Killed with -9 during fast play, the bot loses nothing and applies nothing twice.

A real bot process on SQLite is sent bursts of Flips (each from the player whose
turn it will be, so every one is accepted if none is lost or applied twice), and
is killed with -9 in the middle of each burst, at a moment picked at random
among the Flips already stored. After each restart the burst is finished: the
updates the dead process had acknowledged are in the inbox, the others come
again from the Bot API.
"""

from __future__ import annotations

import random
import signal
from pathlib import Path

from sqlalchemy import text

from telesnap.emulator.testing import RunningEmulator
from telesnap.game import Game, operation_from_json
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.uow import UnitOfWork

from .harness import Table, database_file
from .test_resilience import bot_process

KILLS = 3
BURST = 8


async def _count(database_url: str, statement: str) -> int:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return int(await connection.scalar(text(statement)) or 0)
    finally:
        await engine.dispose()


FLIPS = "SELECT count(*) FROM game_operations WHERE kind = 'card_flipped'"
FLIPS_TWICE = (
    "SELECT count(*) FROM (SELECT update_id FROM game_operations WHERE kind = 'card_flipped'"
    " AND update_id IS NOT NULL GROUP BY update_id HAVING count(*) > 1) AS twice"
)
PENDING = "SELECT count(*) FROM inbox WHERE processed_at IS NULL"


async def _flips_reach(emulator: RunningEmulator, database_url: str, count: int) -> None:
    async def probe() -> bool | None:
        return True if await _count(database_url, FLIPS) >= count else None

    await emulator.client.wait_for(probe, timeout=30, what=f"{count} flips stored")


async def test_kill_9_during_fast_play_loses_no_press_and_applies_none_twice(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat("group", title="Killy", members=list(users.values()))
    database_url = database_file(tmp_path)
    table = Table(emulator, database_url, int(chat["id"]), users)
    log = tmp_path / "bot.log"
    chooser = random.Random()
    async with bot_process(emulator, database_url, log):
        board = await table.open_and_start(["Ann", "Bob"])
    assert board.turn is not None
    order = [board.turn, "Bob" if board.turn == "Ann" else "Ann"]
    sent = 0
    for _ in range(KILLS):
        async with bot_process(emulator, database_url, log) as process:
            first = sent
            for _ in range(BURST):
                await table.command(order[sent % 2], "flip")
                sent += 1
            await _flips_reach(emulator, database_url, first + chooser.randint(1, BURST - 2))
            process.send_signal(signal.SIGKILL)
            await process.wait()
    async with bot_process(emulator, database_url, log):
        await _flips_reach(emulator, database_url, sent)
        await client.wait_until_idle()
        await table.command(order[sent % 2], "flip")  # the game goes on after the last kill
        sent += 1
        await _flips_reach(emulator, database_url, sent)

    assert await _count(database_url, FLIPS) == sent, "every Flip applied, none twice"
    assert await _count(database_url, FLIPS_TWICE) == 0, "no update applied twice"
    assert await _count(database_url, PENDING) == 0, "nothing left behind in the inbox"
    assert all(update.confirmed for update in await client.updates()), "all acknowledged"
    engine = create_engine(database_url)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            (game,) = await uow.games.list_running()
            rows = await uow.history.load(game.id)
            replayed = Game.replay(operation_from_json(row.payload) for row in rows)
            assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
            assert sum(replayed.card_counts()) + len(replayed.pot) == 52
    finally:
        await engine.dispose()


async def _confirmed_and_pending(
    emulator: RunningEmulator, database_url: str, query_id: str
) -> bool | None:
    """True once the press is acknowledged to Telegram and waits in the inbox (None until)."""
    record = next(
        (
            r
            for r in await emulator.client.updates()
            if r.payload.get("callback_query", {}).get("id") == query_id
        ),
        None,
    )
    if record is None or not record.confirmed:
        return None
    pending = await _count(
        database_url,
        f"SELECT count(*) FROM inbox WHERE update_id = {record.update_id} AND processed_at IS NULL",
    )
    return True if pending else None


async def _two_players(emulator: RunningEmulator, tmp_path: Path) -> tuple[Table, str, Path]:
    """Ann and Bob in a group, a database of their own, and the bot's log file."""
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat("group", title="Killy", members=list(users.values()))
    database_url = database_file(tmp_path)
    return Table(emulator, database_url, int(chat["id"]), users), database_url, tmp_path / "bot.log"


async def _flip_with_its_answer_held(table: Table) -> str:
    """Start the game and make its first Flip, whose answer the Bot API holds; its query id."""
    board = await table.open_and_start(["Ann", "Bob"])
    assert board.turn is not None
    await table.client.inject_fault("answerCallbackQuery", "timeout", hold=60.0)
    query_id = await table.client.press(
        table.chat_id, board.message.message_id, table.players[board.turn], button_text="Flip"
    )
    await _flips_reach(table.running, table.database_url, 1)
    return query_id


async def test_a_press_stored_and_acknowledged_before_a_kill_is_applied_and_answered_after(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The kill lands after a press is stored and acknowledged, before it is handled.

    The press waits in its topic's line behind an earlier press whose answer the
    Bot API holds, so the kill finds it stored, acknowledged and not handled.
    """
    client = emulator.client
    table, database_url, log = await _two_players(emulator, tmp_path)
    users = table.players
    async with bot_process(emulator, database_url, log) as process:
        # The first Flip is applied; its answer hangs, and its topic's line with it.
        await _flip_with_its_answer_held(table)
        board = await table.next_board()
        assert board.turn is not None
        flipper = board.turn
        query_id = await client.press(
            table.chat_id, board.message.message_id, users[flipper], button_text="Flip"
        )
        await client.wait_for(
            lambda: _confirmed_and_pending(emulator, database_url, query_id),
            what="the press acknowledged and waiting in the inbox",
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    async with bot_process(emulator, database_url, log):
        toast = await client.wait_for_toast(callback_query_id=query_id, timeout=20)
        await _flips_reach(emulator, database_url, 2)
        shown = await table.wait_for_text(f"{flipper} flips", limit_s=20)
        await client.wait_until_idle()
    assert toast.is_answered, "the press is answered after the restart"
    assert "face-down" in shown.text
    assert await _count(database_url, FLIPS) == 2, "both Flips applied, none twice"
    assert await _count(database_url, PENDING) == 0, "nothing left behind in the inbox"


async def test_a_press_applied_before_a_kill_but_never_answered_is_answered_after(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The kill lands after a Flip's change is committed, while its answer is on its way.

    The Bot API holds the answer, so it never arrives; after the restart the press
    is answered (its effect is on the board already), and no press is answered twice.
    """
    client = emulator.client
    table, database_url, log = await _two_players(emulator, tmp_path)
    async with bot_process(emulator, database_url, log) as process:
        query_id = await _flip_with_its_answer_held(table)
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    async with bot_process(emulator, database_url, log):
        toast = await client.wait_for_toast(callback_query_id=query_id, timeout=12)
        await client.wait_until_idle()
    assert toast.is_answered, "the press applied before the kill is answered after the restart"
    assert await _count(database_url, FLIPS) == 1, "the Flip applied once"
    assert await client.violations() == [], "no press answered twice"


async def test_an_erasure_committed_before_a_kill_has_its_press_answered_after(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The erasure drops what the person's updates say, but keeps its own press's id."""
    client = emulator.client
    table, database_url, log = await _two_players(emulator, tmp_path)
    bob = table.players["Bob"]

    async def committed() -> bool | None:
        (record,) = [r for r in await client.updates() if r.payload.get("callback_query")]
        done = f"SELECT count(*) FROM inbox WHERE update_id = {record.update_id}"
        return True if await _count(database_url, f"{done} AND processed_at IS NOT NULL") else None

    async with bot_process(emulator, database_url, log) as process:
        question = await table.reply_to(await table.command("Bob", "forgetme"), limit_s=20)
        await client.inject_fault("answerCallbackQuery", "timeout", hold=60.0)
        query_id = await client.press(
            table.chat_id, question.message_id, bob, button_text="Erase my data"
        )
        await client.wait_for(committed, what="the erasure committed")
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    async with bot_process(emulator, database_url, log):
        toast = await client.wait_for_toast(callback_query_id=query_id, timeout=20)
        await client.wait_until_idle()
    assert toast.is_answered, "the confirming press is answered after the restart"


async def test_a_board_whose_buttons_a_kill_left_on_loses_them_after_the_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """A board's buttons come off in the chat's next slot after the board that replaced it,
    from memory: killed while that removal waited for its slot, the bot takes them off at its
    next start, so only the game's newest board has buttons (and none is taken off twice)."""
    client = emulator.client
    table, database_url, log = await _two_players(emulator, tmp_path)
    async with bot_process(emulator, database_url, log, flood_control=True) as process:
        board = await table.open_and_start(["Ann", "Bob"], limit_s=30)
        await client.wait_until_idle(quiet=4.0, timeout=30)  # past the burst, at the pace
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        shown = await table.next_board(limit_s=30)  # the start board's removal waits a slot
        marked = (
            f"SELECT count(*) FROM outbox_messages WHERE message_id = {shown.message.message_id}"
        )

        async def marked_sent() -> bool | None:
            return True if await _count(database_url, marked) else None

        await client.wait_for(marked_sent, timeout=10, what="the new board marked sent")
        process.send_signal(signal.SIGKILL)
        await process.wait()
    assert not await client.calls("editMessageReplyMarkup"), "killed before it came off"
    async with bot_process(emulator, database_url, log, flood_control=True):
        await table.next_board(limit_s=30)  # "I am back"
        await client.wait_until_idle(quiet=4.0, timeout=30)  # longer than a slot of the pace
        boards = [m for m in await table.messages() if "Turn:" in m.text]
        live = [m.message_id for m in boards if m.reply_markup]
        assert live == [boards[-1].message_id], "only the newest board has buttons"
