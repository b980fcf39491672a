"""What the bot keeps of what Telegram sends: commands for it, presses, its membership; no edits."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from telegram import Chat, Message, MessageEntity, Update, User

from telesnap.bot.ingress.application import build_application
from telesnap.bot.ingress.relevance import ALLOWED_UPDATES, wanted
from telesnap.bot.ingress.webhook import WebhookServer

from .test_webhook_bodies import SECRET, BotOnly, RecordingIntake, post

TOKEN = "123:abc"


def message(text: str, kind: str = "message") -> dict[str, Any]:
    chat = {"id": -100, "type": "group", "title": "Snap club"}
    body = {"message_id": 5, "date": 1, "chat": chat, "text": text}
    return {"update_id": 1, kind: body, "from": {"id": 7, "is_bot": False, "first_name": "Ann"}}


@pytest.mark.parametrize(
    ("payload", "kept"),
    [
        (message("/snap"), True),
        (message("/snap@SnapBot"), True),
        (message("/snap@otherbot"), False),
        (message("hello everyone"), False),
        (message("/snap", kind="edited_message"), False),
        (message("/snap", kind="channel_post"), False),
        ({"update_id": 1, "callback_query": {"id": "q"}}, True),
        ({"update_id": 1, "my_chat_member": {}}, True),
        ({"update_id": 1, "message_reaction": {}}, False),
    ],
)
def test_only_what_the_bot_uses_is_kept(payload: dict[str, Any], kept: bool) -> None:
    assert wanted(payload, "snapbot") is kept


def test_telegram_is_asked_for_exactly_the_kinds_the_bot_handles() -> None:
    assert ALLOWED_UPDATES == ("message", "callback_query", "my_chat_member")


async def test_the_webhook_stores_commands_but_not_chatter_or_edits() -> None:
    intake = RecordingIntake()
    hook = WebhookServer(BotOnly(), intake, secret=SECRET, host="127.0.0.1", port=0)  # type: ignore[arg-type]
    await hook.start()
    try:
        for number, payload in enumerate(
            [message("hi all"), message("/snap", "edited_message"), message("/join")]
        ):
            payload["update_id"] = number
            status = await post(hook, json.dumps(payload).encode())
            assert status == 200
    finally:
        await hook.stop()
    assert [payload["message"]["text"] for payload in intake.received] == ["/join"]


def test_an_edited_command_is_taken_by_no_handler() -> None:
    application = build_application(TOKEN, "http://127.0.0.1:1")
    with application.bot._unfrozen():  # as getMe leaves it
        application.bot._bot_user = User(1, "Snap", is_bot=True, username="SnapBot")
    chat = Chat(-100, Chat.GROUP)
    user = User(7, "Ann", is_bot=False)
    command = MessageEntity(MessageEntity.BOT_COMMAND, 0, 5)
    sent = Message(5, datetime.now(UTC), chat, from_user=user, text="/snap", entities=[command])
    sent.set_bot(application.bot)
    edited = Update(2, edited_message=sent)
    fresh = Update(1, message=sent)
    handlers = application.handlers[0]
    assert any(handler.check_update(fresh) for handler in handlers)
    assert not any(handler.check_update(edited) for handler in handlers)
