"""A command sent as the group (an anonymous admin) or as a channel: answered, and no seat.

The answers go out through the chat's sender, as the app wires it, to a bot that records them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from telegram import Chat, Message, MessageEntity, Update, User
from telegram.ext import CommandHandler

from telesnap.bot.handlers.commands import command_handlers, on_unknown_command
from telesnap.bot.handlers.privacy import PrivacyBot, on_privacy_command
from telesnap.bot.handlers.runtime import RUNTIME_KEY
from telesnap.bot.handlers.stats import StatsBot, on_stats_command
from telesnap.bot.render.i18n import FSI, PDI, translator
from telesnap.bot.render.texts import refusal_text
from telesnap.services.types import Reason, Refused

from .runtimes import ChatBot, wired_runtime

POST_AS_YOURSELF = (
    "Post as yourself to play: a message sent on behalf of a group or a channel "
    "cannot take part in a game."
)

GROUP = Chat(-100, Chat.SUPERGROUP, title="Snap club")
CHANNEL = Chat(-200, Chat.CHANNEL, title="News")
# What Telegram puts in "from" for these messages: one stand-in user shared by all.
GROUP_STAND_IN = User(1087968824, "Group", is_bot=True, username="GroupAnonymousBot")
CHANNEL_STAND_IN = User(136817688, "Channel", is_bot=True, username="Channel_Bot")


class RecordingLobby:
    """A lobby that records every call it gets."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        async def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append(name)

        return record


def command(text: str, sender: User, sender_chat: Chat) -> Update:
    entity = MessageEntity(MessageEntity.BOT_COMMAND, 0, len(text.split()[0]))
    message = Message(
        9,
        datetime.now(UTC),
        GROUP,
        from_user=sender,
        sender_chat=sender_chat,
        text=text,
        entities=[entity],
    )
    return Update(1, message=message)


def handler_of(name: str) -> Any:
    return next(
        h.callback
        for h in command_handlers()
        if isinstance(h, CommandHandler) and name in h.commands
    )


@pytest.mark.parametrize(
    ("sender", "sender_chat"), [(GROUP_STAND_IN, GROUP), (CHANNEL_STAND_IN, CHANNEL)]
)
@pytest.mark.parametrize("name", ["newgame", "join", "startgame", "endgame"])
async def test_a_command_posted_as_a_chat_gets_a_reply_and_changes_nothing(
    sender: User, sender_chat: Chat, name: str
) -> None:
    lobby = RecordingLobby()
    bot = ChatBot()
    runtime = wired_runtime(bot=bot, lobby=lobby, play=lobby)
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime}, bot=bot)
    await handler_of(name)(command(f"/{name}", sender, sender_chat), context)
    await runtime.settle()
    assert lobby.calls == []
    assert [(m.chat_id, m.text, m.reply_to) for m in bot.sent] == [(GROUP.id, POST_AS_YOURSELF, 9)]
    await runtime.close()


@pytest.mark.parametrize(
    ("sender", "sender_chat"), [(GROUP_STAND_IN, GROUP), (CHANNEL_STAND_IN, CHANNEL)]
)
@pytest.mark.parametrize(
    "name", ["stats", "leaderboard", "history", "replay", "forgetme", "forgetchat"]
)
async def test_a_stats_or_privacy_command_posted_as_a_chat_is_answered_the_same(
    sender: User, sender_chat: Chat, name: str
) -> None:
    """Nobody's figures are shown, nor an erase button signed for the shared stand-in."""
    services = RecordingLobby()
    bot = ChatBot()
    runtime = wired_runtime(bot=bot)
    runtime.stats = StatsBot.for_token(services, "123:secret")  # type: ignore[arg-type]
    runtime.privacy = PrivacyBot.for_token(services, "123:secret")  # type: ignore[arg-type]
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime}, bot=bot)
    handler = on_privacy_command if name.startswith("forget") else on_stats_command
    await handler(command(f"/{name}", sender, sender_chat), context)  # type: ignore[arg-type]
    await runtime.settle()
    assert services.calls == []
    assert [(m.chat_id, m.text, m.reply_to) for m in bot.sent] == [(GROUP.id, POST_AS_YOURSELF, 9)]
    await runtime.close()


async def test_an_unknown_command_is_answered_with_its_name_only() -> None:
    bot = ChatBot()
    runtime = wired_runtime(bot=bot)
    context = SimpleNamespace(
        bot_data={RUNTIME_KEY: runtime}, bot=SimpleNamespace(username="SnapBot")
    )
    ann = User(7, "Ann", is_bot=False)
    long_word = "/" + "a" * 4000
    reversing = "/cmd\u202eevil"  # a right-to-left override inside the command's name
    for text in [f"{long_word} and more", "/dance@SnapBot " + "x" * 4000, reversing]:
        message = Message(9, datetime.now(UTC), GROUP, from_user=ann, text=text)
        await on_unknown_command(Update(1, message=message), context)  # type: ignore[arg-type]
    await runtime.settle()
    await runtime.close()
    said = bot.texts(GROUP.id)
    assert len(said) == 3
    assert len(said[0]) < 100
    assert said[0].startswith("I don't know /aaaa")
    assert said[1] == "I don't know /dance. /help lists what I can do."
    fsi, pdi = "\u2068", "\u2069"
    assert f"{fsi}{reversing}{pdi}. /help lists" in said[2], "the override stays in its name"


def test_an_unknown_setting_is_named_escaped() -> None:
    refused = Refused(Reason.UNKNOWN_SETTING, {"name": "<b>tie</b>&"})
    text = refusal_text(refused, translator("en"))
    assert text == "There is no setting called &lt;b&gt;tie&lt;/b&gt;&amp;."


def test_an_unknown_setting_in_another_script_is_isolated_from_the_sentence() -> None:
    english = refusal_text(Refused(Reason.UNKNOWN_SETTING, {"name": "مهلة"}), translator("en"))
    assert english == f"There is no setting called {FSI}مهلة{PDI}."
    arabic = refusal_text(Refused(Reason.UNKNOWN_SETTING, {"name": "tie"}), translator("ar"))
    assert f"{FSI}tie{PDI}" in arabic
