"""The command menu Telegram clients show, in each language.

The default scope (English) serves users whose language we do not have.

>>> from telesnap.bot.render.i18n import translator
>>> command_descriptions(translator("en"))["snap"]
'Call Snap!'
"""

from __future__ import annotations

import gettext
import logging

from telegram import BotCommand, BotCommandScopeAllPrivateChats

from ..ingress.application import BotApplication
from ..render.i18n import DEFAULT_LANGUAGE, LANGUAGES, translator
from .commands import COMMANDS
from .privacy import PRIVACY_COMMANDS
from .stats import STATS_COMMANDS

logger = logging.getLogger(__name__)


def menu_commands() -> tuple[str, ...]:
    """The commands the menu lists, in order: the game's, the stats, then your data."""
    return (
        *COMMANDS,
        *(command for command in STATS_COMMANDS if command not in COMMANDS),
        *PRIVACY_COMMANDS,
    )


def command_descriptions(tr: gettext.NullTranslations) -> dict[str, str]:
    """What each command does, in the language of ``tr`` (1-256 characters each)."""
    return {
        "start": tr.gettext("What this bot does"),
        "help": tr.gettext("The commands"),
        "rules": tr.gettext("The rules of Snap"),
        "newgame": tr.gettext("Open a game here"),
        "join": tr.gettext("Join the game"),
        "leave": tr.gettext("Leave the game"),
        "startgame": tr.gettext("Deal the cards"),
        "endgame": tr.gettext("Stop the game"),
        "kick": tr.gettext("Remove a player (reply to them)"),
        "extend": tr.gettext("Keep the lobby open longer: /extend MINUTES"),
        "notify": tr.gettext("A private message when a game opens here"),
        "flip": tr.gettext("Flip your card"),
        "snap": tr.gettext("Call Snap!"),
        "snappot": tr.gettext("Call Snap Pot!"),
        "settings": tr.gettext("Show or change the settings"),
        "stats": tr.gettext("Your stats (reply to someone to see theirs)"),
        "leaderboard": tr.gettext("The best players"),
        "history": tr.gettext("The games played here"),
        "replay": tr.gettext("A game's whole history: /replay ID"),
        "forgetme": tr.gettext("Erase what the bot keeps about you"),
        "forgetchat": tr.gettext("Erase this chat's games and stats (admins)"),
    }


PRIVATE_CHAT_COMMANDS = frozenset(
    {"start", "help", "rules", "settings", "stats", "notify", "forgetme"}
)
"""What a private chat with the bot answers with more than "Snap is played in groups"."""


def menu(language: str, *, private: bool = False) -> list[BotCommand]:
    """The menu in ``language``: every command that has a description.

    ``private``: only those a private chat answers.
    """
    descriptions = command_descriptions(translator(language))
    missing = [command for command in menu_commands() if command not in descriptions]
    if missing:
        logger.warning("no menu description for %s", ", ".join(f"/{c}" for c in missing))
    return [
        BotCommand(command, descriptions[command])
        for command in menu_commands()
        if command in descriptions and (not private or command in PRIVATE_CHAT_COMMANDS)
    ]


async def publish_commands(application: BotApplication) -> None:
    """Set the command menus, for groups and for private chats.

    Each the default (English), then one per translated language.
    """
    bot = application.bot
    for scope in (None, BotCommandScopeAllPrivateChats()):
        private = scope is not None
        await bot.set_my_commands(menu(DEFAULT_LANGUAGE, private=private), scope=scope)
        for language in LANGUAGES:
            if language != DEFAULT_LANGUAGE:
                commands = menu(language, private=private)
                await bot.set_my_commands(commands, scope=scope, language_code=language)
