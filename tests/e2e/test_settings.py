"""/settings: the menu, commands, bad values and non-admins, through the emulator."""

from __future__ import annotations

from pathlib import Path

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with


async def settings_menu(table: Table, player: str) -> TranscriptMessage:
    await table.command(player, "settings")
    return await table.client.wait_for_message(
        table.chat_id, lambda m: m.text.startswith("Settings") and bool(m.buttons)
    )


async def as_now(table: Table, message: TranscriptMessage) -> TranscriptMessage:
    """``message`` as the chat shows it once the bot is idle (edited since, maybe)."""
    await table.client.wait_until_idle()
    return next(m for m in await table.messages() if m.message_id == message.message_id)


async def test_an_admin_changes_a_setting_with_the_menu(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        menu = await settings_menu(table, "Ann")
        assert "Tie window: 100 ms" in menu.button_texts
        assert (await table.press("Ann", menu, "Tie window: 100 ms")).text == ""
        choices = await as_now(table, menu)
        assert choices.text.startswith("Tie window: now 100 ms")
        assert "✓ 100 ms" in choices.button_texts
        saved = await table.press("Ann", choices, "200 ms")
        assert saved.text == "Saved."
        overview = await as_now(table, menu)
        assert "Tie window: 200 ms" in overview.button_texts
        assert "Tie window: 200 ms" in overview.text


async def test_everyone_may_look_but_only_admins_change(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        menu = await settings_menu(table, "Bob")
        await table.press("Bob", menu, "Turn timer: 5 minutes")
        choices = await as_now(table, menu)
        refused = await table.press("Bob", choices, "1 minute")
        assert refused.text == "Only a chat admin can do that."
        await table.command("Bob", "settings", "turn_timer 60")
        await table.wait_for_text("Only a chat admin can do that.")
        await table.press("Bob", await as_now(table, menu), "« Back")
        assert "Turn timer: 5 minutes" in (await as_now(table, menu)).button_texts


async def test_bad_values_and_unknown_settings_say_what_is_allowed(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 5000")
        await table.wait_for_text("tie_window must be one of: 0-2000.")
        await table.command("Ann", "settings", "match_mode colour")
        await table.wait_for_text("match_mode must be one of: rank, rank_and_colour, suit.")
        await table.command("Ann", "settings", "speed 3")
        await table.wait_for_text("There is no setting called speed.")
        await table.command("Ann", "settings", "tie_window")
        await table.wait_for_text("Write /settings NAME VALUE")
        await table.command("Ann", "settings", "penalty off")
        saved = await table.wait_for_text("Saved.")
        assert "Tie window: 100 ms" in saved.text
        assert "Wrong-call penalty: off" in saved.text


async def test_a_timer_of_0_is_refused_with_what_is_allowed(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "turn_timer 0")
        await table.wait_for_text("turn_timer must be one of: 10-86400, off.")
        await table.command("Ann", "settings", "turn_timer off")
        saved = await table.wait_for_text("Saved.")
        assert "Turn timer: off" in saved.text
