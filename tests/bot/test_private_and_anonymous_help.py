"""/help, /rules and /start sent as the group (an anonymous admin) or a channel: answered.

They change nothing and need no seat; every other command keeps its "Post as yourself" answer.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from telegram import Chat, User

from telesnap.bot.handlers.runtime import RUNTIME_KEY
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.rules_text import full_rules
from telesnap.bot.render.texts import help_text

from .runtimes import ChatBot, wired_runtime
from .test_posted_as_chat import (
    CHANNEL,
    CHANNEL_STAND_IN,
    GROUP,
    GROUP_STAND_IN,
    POST_AS_YOURSELF,
    RecordingLobby,
    command,
    handler_of,
)

ENGLISH = translator("en")
SENDERS = pytest.mark.parametrize(
    ("sender", "sender_chat"), [(GROUP_STAND_IN, GROUP), (CHANNEL_STAND_IN, CHANNEL)]
)


async def answers_to(text: str, sender: User, sender_chat: Chat) -> tuple[list[str], list[str]]:
    """What the group is sent for ``text``, and what the services were asked."""
    lobby = RecordingLobby()
    bot = ChatBot()
    runtime = wired_runtime(bot=bot, lobby=lobby, play=lobby, notify=lobby)
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime}, bot=bot)
    await handler_of(text.split()[0][1:])(command(text, sender, sender_chat), context)
    await runtime.settle()
    await runtime.close()
    return bot.texts(GROUP.id), lobby.calls


@SENDERS
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help", help_text(ENGLISH)),
        ("/start", help_text(ENGLISH)),
        ("/rules", full_rules(ENGLISH)),
    ],
)
async def test_help_rules_and_start_posted_as_a_chat_are_answered(
    sender: User, sender_chat: Chat, text: str, expected: str
) -> None:
    said, calls = await answers_to(text, sender, sender_chat)
    assert said == [expected]
    assert calls == []


@SENDERS
@pytest.mark.parametrize("text", ["/settings", "/settings penalty off", "/notify", "/kick"])
async def test_other_commands_posted_as_a_chat_are_still_refused(
    sender: User, sender_chat: Chat, text: str
) -> None:
    said, calls = await answers_to(text, sender, sender_chat)
    assert said == [POST_AS_YOURSELF]
    assert calls == []
