"""A live board after the bot is killed with -9 and started again: it keeps its last events."""

from __future__ import annotations

import signal
from pathlib import Path

from telesnap.bot.delivery.live import LIVE_EVENTS
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .board_timeline import states
from .harness import Table, database_file, read_board
from .test_live_board import flip_data
from .test_resilience import bot_process

FLIPS_BEFORE = 8
BACK = "♻️ I am back: the game goes on."


def event_lines(text: str) -> list[str]:
    """The live board's event lines: those above the table (none when it shows the table only)."""
    events, _, table = text.partition("\n\n")
    return events.splitlines() if table else []


async def live_message(table: Table, message_id: int) -> TranscriptMessage:
    return next(m for m in await table.messages() if m.message_id == message_id)


async def flip_on(table: Table, message: TranscriptMessage) -> TranscriptMessage:
    """The player whose turn it is presses Flip; the live board once edited to the new table."""
    turn = read_board(message).turn
    assert turn is not None
    old = flip_data(message)
    await table.press(turn, message, "Flip")

    async def probe() -> TranscriptMessage | None:
        now = await live_message(table, message.message_id)
        return now if flip_data(now) != old else None

    return await table.client.wait_for(probe, timeout=20, what="the live board edited")


async def test_a_live_board_keeps_its_last_events_across_a_kill(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    client = emulator.client
    users = {name: int((await client.create_user(name))["id"]) for name in ("Ann", "Bob")}
    chat = await client.create_chat(
        "group", title="Live club", members=list(users.values()), admins=[users["Ann"]]
    )
    database_url = database_file(tmp_path)
    table = Table(emulator, database_url, int(chat["id"]), users)
    log = tmp_path / "bot.log"
    async with bot_process(emulator, database_url, log) as process:
        await table.command("Ann", "settings", "board_style live")
        await table.wait_for_text("Saved.", limit_s=20)
        message = (await table.open_and_start(["Ann", "Bob"], limit_s=20)).message
        for _ in range(FLIPS_BEFORE):
            message = await flip_on(table, message)
        await client.wait_until_idle()
        before = await live_message(table, message.message_id)
        shown_before = len(states(before))
        assert len(event_lines(before.text)) == LIVE_EVENTS
        process.send_signal(signal.SIGKILL)
        await process.wait()
    async with bot_process(emulator, database_url, log):
        after = await flip_on(table, before)
    # The restart shows the running game's table again ("I am back", in the same message),
    # and the flip after it edits the message: neither loses the events shown before.
    since_kill = states(after)[shown_before:]
    assert len(since_kill) == 2, "the table shown again, then the flip, both in the live board"
    back = event_lines(since_kill[0].text)
    assert back == [*event_lines(before.text)[1:], BACK], "the same last events, then I am back"
    lines = event_lines(after.text)
    assert lines[:-1] == back[1:], "the same last events, then the new flip"
    assert " flips " in lines[-1]
