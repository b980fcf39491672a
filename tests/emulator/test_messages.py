"""Telegram's rules on sending, editing and deleting messages, where bots usually break."""

from __future__ import annotations

from typing import Any

import pytest

from telesnap.emulator.errors import MESSAGE_NOT_MODIFIED
from telesnap.emulator.testing import RunningEmulator

from .raw import RawBotApi


def keyboard(*rows: list[tuple[str, str]]) -> dict[str, Any]:
    return {"inline_keyboard": [[{"text": t, "callback_data": d} for t, d in row] for row in rows]}


@pytest.fixture
async def group(emulator: RunningEmulator) -> dict[str, Any]:
    alice = await emulator.client.create_user("Alice")
    return await emulator.client.create_chat("group", title="Snap", members=[alice["id"]])


async def test_html_is_parsed_into_entities(api: RawBotApi, group: dict[str, Any]) -> None:
    sent = await api.ok(
        "sendMessage",
        chat_id=group["id"],
        parse_mode="HTML",
        text='<b>Bold <i>both</i></b> <a href="https://t.me">link</a> &amp; &#9824; <code>x</code>',
    )
    assert sent["text"] == "Bold both link & ♠ x"
    assert [e["type"] for e in sent["entities"]] == ["bold", "italic", "text_link", "code"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1 < 2", "Unsupported start tag"),
        ("Tom & Jerry", "Can't find end of the entity"),
        ("<b>bold <i>both</b></i>", 'Unmatched end tag at byte offset 15, expected "</i>"'),
        ("<b>never closed", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<blink>old</blink>", 'Unsupported start tag "blink"'),
    ],
)
async def test_invalid_html_cannot_be_parsed(
    api: RawBotApi, group: dict[str, Any], text: str, problem: str
) -> None:
    status, description = await api.error(
        "sendMessage", chat_id=group["id"], text=text, parse_mode="HTML"
    )
    assert status == 400
    assert description.startswith("Bad Request: can't parse entities: ")
    assert problem in description


async def test_text_must_be_1_to_4096_characters_after_parsing(
    api: RawBotApi, group: dict[str, Any]
) -> None:
    longest = "<b>" + "a" * 4096 + "</b>"
    await api.ok("sendMessage", chat_id=group["id"], text=longest, parse_mode="HTML")
    assert await api.error("sendMessage", chat_id=group["id"], text="a" * 4097) == (
        400,
        "Bad Request: message is too long",
    )
    assert await api.error(
        "sendMessage", chat_id=group["id"], text="<b></b>", parse_mode="HTML"
    ) == (400, "Bad Request: message text is empty")


async def test_inline_keyboard_limits(api: RawBotApi, group: dict[str, Any]) -> None:
    chat_id = group["id"]
    too_long_data = keyboard([("Flip", "x" * 65)])
    assert await api.error(
        "sendMessage", chat_id=chat_id, text="t", reply_markup=too_long_data
    ) == (400, "Bad Request: BUTTON_DATA_INVALID")
    await api.ok("sendMessage", chat_id=chat_id, text="t", reply_markup=keyboard([("F", "x" * 64)]))
    nine_in_a_row = keyboard([(str(n), str(n)) for n in range(9)])
    status, _ = await api.error(
        "sendMessage", chat_id=chat_id, text="t", reply_markup=nine_in_a_row
    )
    assert status == 400
    hundred_and_one = keyboard(*([(str(n), str(n))] for n in range(101)))
    status, _ = await api.error(
        "sendMessage", chat_id=chat_id, text="t", reply_markup=hundred_and_one
    )
    assert status == 400


async def test_edits_are_recorded_and_identical_edits_refused(
    api: RawBotApi, emulator: RunningEmulator, group: dict[str, Any]
) -> None:
    chat_id = group["id"]
    sent = await api.ok(
        "sendMessage", chat_id=chat_id, text="One", reply_markup=keyboard([("A", "a")])
    )
    message_id = sent["message_id"]
    await api.ok(
        "editMessageText",
        chat_id=chat_id,
        message_id=message_id,
        text="Two",
        reply_markup=keyboard([("A", "a")]),
    )
    assert await api.error(
        "editMessageText",
        chat_id=chat_id,
        message_id=message_id,
        text="Two",
        reply_markup=keyboard([("A", "a")]),
    ) == (400, f"Bad Request: {MESSAGE_NOT_MODIFIED}")
    await api.ok("editMessageReplyMarkup", chat_id=chat_id, message_id=message_id)

    (message,) = await emulator.client.transcript(chat_id)
    assert (message.text, message.reply_markup) == ("Two", None)
    assert [(r.text, r.reply_markup) for r in message.history] == [
        ("One", keyboard([("A", "a")])),
        ("Two", keyboard([("A", "a")])),
    ]


async def test_unknown_and_deleted_messages(
    api: RawBotApi, emulator: RunningEmulator, group: dict[str, Any]
) -> None:
    chat_id = group["id"]
    assert await api.error("editMessageText", chat_id=chat_id, message_id=99, text="x") == (
        400,
        "Bad Request: message to edit not found",
    )
    assert await api.error("deleteMessage", chat_id=chat_id, message_id=99) == (
        400,
        "Bad Request: message to delete not found",
    )
    sent = await api.ok("sendMessage", chat_id=chat_id, text="bye")
    assert await api.ok("deleteMessage", chat_id=chat_id, message_id=sent["message_id"]) is True
    (message,) = await emulator.client.transcript(chat_id)
    assert message.deleted


async def test_unknown_chat_kicked_bot_and_missing_topic(
    api: RawBotApi, emulator: RunningEmulator, group: dict[str, Any]
) -> None:
    assert await api.error("sendMessage", chat_id=-777, text="x") == (
        400,
        "Bad Request: chat not found",
    )
    assert await api.error("sendMessage", chat_id=group["id"], text="x", message_thread_id=5) == (
        400,
        "Bad Request: message thread not found",
    )
    await emulator.client.kick_bot(group["id"])
    assert await api.error("sendMessage", chat_id=group["id"], text="x") == (
        403,
        "Forbidden: bot was kicked from the group chat",
    )
    (update,) = await emulator.client.updates()
    assert update.kind == "my_chat_member"
    assert update.payload["my_chat_member"]["new_chat_member"]["status"] == "kicked"


async def test_forum_topics(api: RawBotApi, emulator: RunningEmulator) -> None:
    alice = await emulator.client.create_user("Alice")
    forum = await emulator.client.create_chat("supergroup", members=[alice["id"]], forum=True)
    topic = await emulator.client.create_topic(forum["id"], "Table 1")
    sent = await api.ok("sendMessage", chat_id=forum["id"], text="Dealt", message_thread_id=topic)
    assert (sent["message_thread_id"], sent["is_topic_message"]) == (topic, True)
    assert await api.error(
        "sendMessage", chat_id=forum["id"], text="x", message_thread_id=topic + 9
    ) == (400, "Bad Request: message thread not found")
    (message,) = await emulator.client.transcript(forum["id"])
    assert message.message_thread_id == topic


async def test_a_topics_messages_reply_to_its_creation(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    forum = await client.create_chat("supergroup", admins=[alice["id"]], forum=True)
    topic = await client.create_topic(forum["id"], "Table 1")
    command = await client.send_command(forum["id"], alice["id"], "start", message_thread_id=topic)
    sent = await api.ok("sendMessage", chat_id=forum["id"], text="Dealt", message_thread_id=topic)
    answer = await api.ok(
        "sendMessage",
        chat_id=forum["id"],
        text="To you",
        message_thread_id=topic,
        reply_parameters={"message_id": command},
    )

    (update,) = await api.ok("getUpdates")
    created = update["message"]["reply_to_message"]
    assert (created["message_id"], created["from"]["id"]) == (topic, alice["id"])
    assert created["forum_topic_created"]["name"] == "Table 1"
    assert (created["message_thread_id"], created["is_topic_message"]) == (topic, True)
    assert "text" not in created
    assert sent["reply_to_message"]["message_id"] == topic
    assert answer["reply_to_message"]["message_id"] == command
    assert [m.reply_to_message_id for m in await client.transcript(forum["id"])] == [None, command]


async def test_ignored_legacy_reply_parameters_send_no_reply(
    api: RawBotApi, group: dict[str, Any]
) -> None:
    sent = await api.ok(
        "sendMessage",
        chat_id=group["id"],
        text="Alone",
        reply_to_message_id=999,
        allow_sending_without_reply=False,
    )
    assert "reply_to_message" not in sent, "Bot API 10.1 documents only reply_parameters"


async def test_chat_information_and_pinning(api: RawBotApi, emulator: RunningEmulator) -> None:
    alice = await emulator.client.create_user("Alice")
    bob = await emulator.client.create_user("Bob")
    group = await emulator.client.create_chat(
        "supergroup", title="Snap", members=[bob["id"]], admins=[alice["id"]]
    )
    info = await api.ok("getChat", chat_id=group["id"])
    assert (info["type"], info["title"]) == ("supergroup", "Snap")
    member = await api.ok("getChatMember", chat_id=group["id"], user_id=bob["id"])
    assert member["status"] == "member"
    admins = await api.ok("getChatAdministrators", chat_id=group["id"])
    assert [(a["user"]["id"], a["status"]) for a in admins] == [(alice["id"], "creator")]
    sent = await api.ok("sendMessage", chat_id=group["id"], text="pin me")
    assert await api.error(
        "pinChatMessage", chat_id=group["id"], message_id=sent["message_id"]
    ) == (400, "Bad Request: not enough rights to manage pinned messages in the chat")


async def test_commands_per_scope_and_language(api: RawBotApi, group: dict[str, Any]) -> None:
    commands = [{"command": "snap", "description": "Call snap"}]
    scope = {"type": "chat", "chat_id": group["id"]}
    await api.ok("setMyCommands", commands=commands, scope=scope, language_code="de")
    assert await api.ok("getMyCommands", scope=scope, language_code="de") == commands
    assert await api.ok("getMyCommands", scope=scope) == []
    assert await api.ok("getMyCommands") == []
    await api.ok("deleteMyCommands", scope=scope, language_code="de")
    assert await api.ok("getMyCommands", scope=scope, language_code="de") == []
    status, _ = await api.error(
        "setMyCommands", commands=[{"command": "Bad Name", "description": "x"}]
    )
    assert status == 400


async def test_chat_action(api: RawBotApi, group: dict[str, Any]) -> None:
    assert await api.ok("sendChatAction", chat_id=group["id"], action="typing") is True
    assert await api.error("sendChatAction", chat_id=group["id"], action="dancing") == (
        400,
        "Bad Request: wrong parameter action in request",
    )


async def test_replies_carry_the_message_replied_to(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    bob = await client.create_user("Bob")
    chat = await client.create_chat("group", members=[alice["id"], bob["id"]])
    board = await api.ok("sendMessage", chat_id=chat["id"], text="Board")
    first = await client.send_command(chat["id"], alice["id"], "flip")
    to_alice = await client.send_command(chat["id"], bob["id"], "stats", reply_to=first)
    await client.send_command(chat["id"], bob["id"], "snap", reply_to=board["message_id"])
    with pytest.raises(ValueError, match="no message 999 to reply to"):
        await client.send_command(chat["id"], bob["id"], "stats", reply_to=999)

    updates = {u["message"]["text"]: u["message"] for u in await api.ok("getUpdates", timeout=0)}
    assert "reply_to_message" not in updates["/flip"]
    replied = updates["/stats"]["reply_to_message"]
    assert (replied["message_id"], replied["from"]["id"]) == (first, alice["id"])
    assert updates["/snap"]["reply_to_message"]["from"]["is_bot"] is True
    answer = await api.ok(
        "sendMessage", chat_id=chat["id"], text="Stats", reply_parameters={"message_id": to_alice}
    )
    assert answer["reply_to_message"]["message_id"] == to_alice
    assert "reply_to_message" not in answer["reply_to_message"], "one level, as Telegram does"
    transcript = await client.transcript(chat["id"])
    assert [m.reply_to_message_id for m in transcript] == [None, to_alice]


async def test_the_client_reads_back_the_records_the_emulator_keeps(
    api: RawBotApi, emulator: RunningEmulator, group: dict[str, Any]
) -> None:
    client, kept = emulator.client, emulator.emulator
    (alice_id,) = (user.id for user in kept.world.users.values() if not user.is_bot)
    sent = await api.ok(
        "sendMessage", chat_id=group["id"], text="One", reply_markup=keyboard([("A", "a")])
    )
    await api.ok("editMessageText", chat_id=group["id"], message_id=sent["message_id"], text="Two")
    await api.ok(
        "editMessageReplyMarkup",
        chat_id=group["id"],
        message_id=sent["message_id"],
        reply_markup=keyboard([("B", "b")]),
    )
    query_id = await client.press(group["id"], sent["message_id"], alice_id, data="b")
    await api.ok("getUpdates", timeout=0)
    await api.ok("answerCallbackQuery", callback_query_id=query_id, text="Fine")

    # One type per record: what the client rebuilds from JSON is what the emulator holds.
    assert await client.transcript(group["id"]) == kept.world.transcript(group["id"])
    assert await client.toasts() == list(kept.callback_queries.values())
    assert await client.updates() == list(kept.updates.history)
    (toast,) = await client.toasts()
    assert (toast.callback_query_id, toast.text, toast.is_answered) == (query_id, "Fine", True)
