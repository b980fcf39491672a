"""In a forum topic every message arrives as a reply to the topic's first one: not a choice."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from telegram import Chat, ForumTopicCreated, Message, MessageEntity, Update, User

from telesnap.bot.handlers.commands import command_handlers
from telesnap.bot.handlers.context import replied_to
from telesnap.bot.handlers.runtime import RUNTIME_KEY

from .runtimes import ChatBot, wired_runtime
from .test_posted_as_chat import RecordingLobby, handler_of

FORUM = Chat(-100, Chat.SUPERGROUP, title="Snap club", is_forum=True)
TOPIC = 42
ANN = User(7, "Ann", is_bot=False)
CID = User(9, "Cid", is_bot=False)
NOW = datetime.now(UTC)
TOPIC_START = Message(
    TOPIC,
    NOW,
    FORUM,
    from_user=CID,
    forum_topic_created=ForumTopicCreated("Snap", 0),
    is_topic_message=True,
)


def in_topic(text: str, reply_to: Message) -> Message:
    entity = MessageEntity(MessageEntity.BOT_COMMAND, 0, len(text.split()[0]))
    return Message(
        50,
        NOW,
        FORUM,
        from_user=ANN,
        text=text,
        entities=[entity],
        message_thread_id=TOPIC,
        is_topic_message=True,
        reply_to_message=reply_to,
    )


def test_the_topics_first_message_is_no_reply_but_a_real_reply_is() -> None:
    assert replied_to(in_topic("/kick", TOPIC_START)) is None
    bobs = Message(49, NOW, FORUM, from_user=User(8, "Bob", is_bot=False), message_thread_id=TOPIC)
    assert replied_to(in_topic("/kick", bobs)) is bobs


async def test_a_bare_kick_in_a_topic_removes_nobody() -> None:
    lobby = RecordingLobby()
    bot = ChatBot()
    runtime = wired_runtime(bot=bot, lobby=lobby, play=lobby)
    context: Any = SimpleNamespace(bot_data={RUNTIME_KEY: runtime}, bot=bot)
    assert any("kick" in getattr(h, "commands", ()) for h in command_handlers())
    await handler_of("kick")(Update(1, message=in_topic("/kick", TOPIC_START)), context)
    await runtime.settle()
    await runtime.close()
    assert "kick" not in lobby.calls, "the topic's creator is not the one to remove"
    (answer,) = bot.sent
    assert answer.text == "Reply with /kick to a message of the player you want to remove."
    assert (answer.chat_id, answer.thread_id, answer.reply_to) == (FORUM.id, TOPIC, 50), (
        "in the topic, replying to the command"
    )
