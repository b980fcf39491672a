"""The command menu Telegram clients show, in each language."""

from __future__ import annotations

from telegram import BotCommand

from .application import COMMANDS, BotApplication
from .i18n import translator


async def publish_commands(application: BotApplication) -> None:
    """Set the command menu that Telegram clients show."""
    tr = translator("en")
    descriptions = {
        "start": tr.gettext("What this bot does"),
        "help": tr.gettext("The commands"),
        "rules": tr.gettext("The rules of Snap"),
        "newgame": tr.gettext("Open a game here"),
        "join": tr.gettext("Join the game"),
        "leave": tr.gettext("Leave the game"),
        "startgame": tr.gettext("Deal the cards"),
        "endgame": tr.gettext("Stop the game"),
        "kick": tr.gettext("Remove a player (reply to them)"),
        "flip": tr.gettext("Flip your card"),
        "snap": tr.gettext("Call Snap!"),
        "snappot": tr.gettext("Call Snap Pot!"),
        "settings": tr.gettext("Show or change the settings"),
    }
    await application.bot.set_my_commands(
        [BotCommand(command, descriptions[command]) for command in COMMANDS]
    )
