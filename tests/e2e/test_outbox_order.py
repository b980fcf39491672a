"""Boards go out in order after a slow failed send, and the newest board is the last one."""

from __future__ import annotations

import re
from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, read_board, table_with

FLIP = re.compile(r"^\w+ flips ", re.MULTILINE)


async def test_a_board_held_then_dropped_is_sent_with_the_boards_queued_behind_it(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob"]) as table:
        board = await table.open_and_start(["Ann", "Bob"])
        assert board.turn is not None
        order = [board.turn, "Bob" if board.turn == "Ann" else "Ann"]
        client = table.client
        await client.inject_fault("sendMessage", "timeout", hold=2.0)
        await table.command(order[0], "flip")  # its board is held, then dropped
        await client.wait_for_call("sendMessage", lambda call: call.status is None)
        await table.command(order[1], "flip")  # queued while the first is on its way
        await client.wait_for_call("sendMessage", lambda call: call.fault == "timeout")
        await table.command(order[0], "flip")  # queued while the outbox backs off (1 s)

        async def all_shown() -> bool | None:
            texts = [m.text for m in await table.messages()]
            return True if sum(len(FLIP.findall(text)) for text in texts) >= 3 else None

        await client.wait_for(all_shown, timeout=15, what="the three flips shown")
        await client.wait_until_idle()
        boards = [m for m in await table.messages() if "face-down" in m.text]
        flips = [len(FLIP.findall(m.text)) for m in boards]
        assert sum(flips) == 3, "each flip shown once"
        last = read_board(boards[-1])
        assert last.turn == order[1], "the last message shows the newest table"
        toast = await table.press(order[1], last.message, "Flip")
        assert toast.text in ("", None), f"the newest board's Flip works, not {toast.text!r}"
