"""/help as players read it: every command the bot answers, grouped, and whole in Arabic."""

from __future__ import annotations

import re
from pathlib import Path

from telesnap.bot.handlers.menu import menu_commands
from telesnap.bot.render.i18n import LRI, PDI, translator
from telesnap.emulator.testing import RunningEmulator

from .harness import database_file, table_with

COMMAND = re.compile(r"(?<![\w/<])/([a-z_]+)")


async def test_help_lists_every_command_in_groups(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        await table.command("Ann", "help")
        shown = (await table.wait_for_text("/newgame")).text
    lines = shown.splitlines()
    groups = ["Play", "Stats", "Settings and help", "Your data"]
    headings = [line for line in lines if line in groups]
    assert headings == groups, shown
    listed = set(COMMAND.findall(shown))
    assert set(menu_commands()) <= listed, set(menu_commands()) - listed
    for command in ("stats", "leaderboard", "history", "replay"):
        group = lines[lines.index("Stats") : lines.index("Settings and help")]
        assert any(line.startswith(f"/{command}") for line in group), command
    for command in ("forgetme", "forgetchat"):
        assert any(line.startswith(f"/{command}") for line in lines[lines.index("Your data") :])


async def test_commands_stay_whole_in_arabic_lines(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann"], admins=["Ann"], languages={"Ann": "ar"}
    ) as table:
        await table.command("Ann", "settings", "language ar")
        await table.client.wait_until_idle()
        await table.command("Ann", "help")
        shown = (await table.wait_for_text("/newgame")).text
    assert translator("ar").gettext("/history: the games played here")[9:] in shown
    assert f"{LRI}/replay ID{PDI}" in shown
    assert f"{LRI}/newgame{PDI}" in shown
    for command in menu_commands():  # every command is isolated, none is left bare
        assert f"{LRI}/{command}" in shown, command
    assert not re.search(rf"(?<!{LRI})/[a-z]", shown.replace("</", "")), shown
