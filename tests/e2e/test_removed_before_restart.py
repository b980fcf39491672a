"""The bot removed from a chat just before a kill: nothing is sent there after the restart.

The removal (``my_chat_member``) is stored and acknowledged, but the kill lands before it is
handled; the restart's handling of it ends the chat's game, and showing the running games
again ("I am back") leaves that chat out.
"""

from __future__ import annotations

import signal
from pathlib import Path

from telesnap.emulator.testing import RunningEmulator

from .test_durable_outbox import _crashy_table
from .test_failures import sql
from .test_kill import _flip_with_its_answer_held
from .test_resilience import bot_process

REMOVAL_PENDING = (
    "SELECT count(*) FROM inbox WHERE processed_at IS NULL AND payload LIKE '%my_chat_member%'"
)
UNSENT = "SELECT count(*) FROM outbox_messages WHERE state = 'pending'"


async def test_a_removal_stored_but_not_handled_at_a_kill_sends_nothing_there_after(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    table = await _crashy_table(emulator, tmp_path)
    client = emulator.client
    log = tmp_path / "bot.log"
    async with bot_process(emulator, table.database_url, log) as process:
        await _flip_with_its_answer_held(table)  # the topic's line waits on its answer

        async def flip_shown() -> bool | None:  # its board out, the one before it bared
            unsent = (await sql(table.database_url, UNSENT))[0][0]
            return True if not unsent and await client.calls("editMessageReplyMarkup") else None

        await client.wait_for(flip_shown, what="the flip's board shown")
        await client.kick_bot(table.chat_id)

        async def removal_stored() -> bool | None:
            return True if (await sql(table.database_url, REMOVAL_PENDING))[0][0] else None

        await client.wait_for(removal_stored, what="the removal stored, not handled")
        process.send_signal(signal.SIGKILL)
        await process.wait()
    await client.clear_faults()
    calls_before = len(await client.calls())
    async with bot_process(emulator, table.database_url, log):

        async def settled() -> bool | None:
            games = await sql(table.database_url, "SELECT status FROM games")
            unsent = (await sql(table.database_url, UNSENT))[0][0]
            return True if games == [("abandoned",)] and unsent == 0 else None

        await client.wait_for(settled, timeout=20, what="the game ended, no row left unsent")
        await client.wait_until_idle()
    calls = (await client.calls())[calls_before:]
    to_chat = [c.method for c in calls if str(c.params.get("chat_id")) == str(table.chat_id)]
    assert to_chat == [], "nothing is sent to the chat that removed the bot"
