"""A lobby's countdown, shown on its message, and /extend to keep it open longer."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with
from .test_timers import Clock, set_up

STARTING = "A game of Snap is starting"


async def lobby_now(table: Table, lobby: TranscriptMessage) -> str:
    await table.client.wait_until_idle()
    return next(m.text for m in await table.messages() if m.message_id == lobby.message_id)


async def test_extend_pushes_the_expiry_out_across_a_restart(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()  # 18:00
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "lobby_expiry 10")
        await table.command("Bob", "newgame")
        lobby = await table.wait_for_text(STARTING)
        assert "⏳ Closes in 10 minutes (at 18:10 UTC)" in lobby.text

        clock.advance(240)  # 18:04: the creator adds 15 minutes to the 6 left
        answer = await table.reply_to(await table.command("Bob", "extend", "15"))
        assert answer.text == "⏳ The lobby stays open until 18:25 UTC."
        assert "⏳ Closes in 21 minutes (at 18:25 UTC)" in await lobby_now(table, lobby)

        await table.stop_bot()
        await table.start_bot()
        clock.advance(360)  # 18:10, when it would have closed
        await table.fire_timers()
        await table.client.wait_until_idle()
        assert not [m for m in await table.messages() if "the lobby is closed" in m.text]
        await table.press("Ann", lobby, "Join")
        assert "Ann" in await lobby_now(table, lobby)

        clock.advance(900)  # 18:25
        await table.fire_timers()
        await table.wait_for_text("the lobby is closed")
        assert await lobby_now(table, lobby) == "This game was called off."


async def test_only_the_creator_or_an_admin_may_extend_and_not_past_a_day(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    clock = Clock()
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"], clock=clock
    ) as table:
        await set_up(table, "lobby_expiry 1380")  # 23 hours
        await table.command("Bob", "newgame")
        lobby = await table.wait_for_text(STARTING)
        before = lobby.text

        refused = await table.reply_to(await table.command("Cid", "extend"))
        assert refused.text == "Only Bob, who runs this game, or a chat admin can do that."
        assert await lobby_now(table, lobby) == before

        admin = await table.reply_to(await table.command("Ann", "extend", "30"))
        assert admin.text == "⏳ The lobby stays open until 17:30 UTC."
        too_far = await table.reply_to(await table.command("Bob", "extend", "31"))
        assert too_far.text == (
            "A lobby stays open 24 hours at most: this one closes at 17:30 UTC."
        )
        not_a_number = await table.reply_to(await table.command("Bob", "extend", "2000"))
        assert "/extend 15 adds 15 minutes (1 to 1440; 10 without a number)" in not_a_number.text
        assert "⏳ Closes in 23 h 30 min (at 17:30 UTC)" in await lobby_now(table, lobby)
