from __future__ import annotations

import datetime as dt

import pytest
from telegram import Update
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter
from telegram.ext import Application

from telesnap.emulator.testing import RunningEmulator
from telesnap.emulator.users import Press

from .sample_bot import SampleBot


async def test_start_command_gets_a_reply_with_a_keyboard(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    group = await client.create_chat("group", title="Snap club", members=[alice["id"]])
    await client.send_command(group["id"], alice["id"], "start", mention_bot=True)

    reply = await client.wait_for_message(group["id"], timeout=5)

    assert reply.text == "Hello Alice <3"
    assert reply.parse_mode == "HTML"
    assert reply.entities == [{"type": "bold", "offset": 6, "length": 5}]
    assert reply.button_texts == ["Flip", "Same again"]
    assert await client.violations() == []


async def test_button_press_gets_a_toast_and_an_edit(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    await client.send_command(chat["id"], alice["id"], "start")
    greeting = await client.wait_for_message(chat["id"])

    query_id = await client.press(chat["id"], greeting.message_id, alice["id"], button_text="Flip")

    toast = await client.wait_for_toast(callback_query_id=query_id)
    assert (toast.text, toast.show_alert, toast.data) == ("Flipped!", False, "flip")
    edited = await client.wait_for_message(chat["id"], lambda m: m.text == "Flipped by Alice")
    assert [revision.text for revision in edited.history] == ["Hello Alice <3"]
    assert edited.button_texts == ["Flip", "Same again"]


async def test_ptb_raises_bad_request_for_an_identical_edit(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    await client.send_command(chat["id"], alice["id"], "start")
    greeting = await client.wait_for_message(chat["id"])
    await client.press(chat["id"], greeting.message_id, alice["id"], data="same")
    await client.wait_until_idle()

    (error,) = sample_bot.errors
    assert isinstance(error, BadRequest)
    assert error.message.startswith("Message is not modified")  # PTB capitalises it
    (violation,) = await client.violations()
    assert violation.method == "editMessageText"


async def test_ptb_raises_retry_after_for_a_429(
    emulator: RunningEmulator,
    application: Application,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without it PTB 22 warns (an error here) when it builds RetryAfter.
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    await emulator.client.inject_fault("sendMessage", "retry_after", retry_after=7)

    with pytest.raises(RetryAfter) as caught:
        await application.bot.send_message(chat["id"], "hi")
    assert caught.value.retry_after == dt.timedelta(seconds=7)
    await application.bot.send_message(chat["id"], "hi again")
    assert await emulator.client.violations() == []  # an injected fault is not the bot's fault


@pytest.mark.parametrize(
    ("kind", "error_type"),
    [("server_error", NetworkError), ("bad_gateway", NetworkError), ("forbidden", Forbidden)],
)
async def test_injected_faults_reach_ptb(
    emulator: RunningEmulator,
    application: Application,  # type: ignore[type-arg]
    kind: str,
    error_type: type[Exception],
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    await emulator.client.inject_fault("sendMessage", kind, count=2)
    for _ in range(2):
        with pytest.raises(error_type):
            await application.bot.send_message(chat["id"], "hi")
    await application.bot.send_message(chat["id"], "third time lucky")
    calls = await emulator.client.calls("sendMessage")
    assert [call.fault for call in calls] == [kind, kind, None]


async def test_a_held_request_is_dropped_or_answered_late(
    emulator: RunningEmulator,
    application: Application,  # type: ignore[type-arg]
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    await emulator.client.inject_fault("sendMessage", "timeout", hold=0.2)
    with pytest.raises(NetworkError):
        await application.bot.send_message(chat["id"], "lost")
    await emulator.client.inject_fault("sendMessage", "timeout", hold=0.2, answer_late=True)
    late = await application.bot.send_message(chat["id"], "late")

    calls = await emulator.client.calls("sendMessage")
    assert calls[1].answered_at is not None
    assert calls[1].answered_at - calls[1].received_at >= 0.2
    assert [m.text for m in await emulator.client.transcript(chat["id"])] == ["late"]
    assert late.text == "late"


async def test_long_polling_answers_when_an_update_arrives(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    waiting = await client.wait_for_call("getUpdates", lambda c: c.answered_at is None)

    await client.send_command(chat["id"], alice["id"], "start")
    await client.wait_for_message(chat["id"])

    (update,) = await client.updates()
    answered = next(c for c in await client.calls("getUpdates") if c.sequence == waiting.sequence)
    assert answered.params["timeout"] == "5"
    assert answered.received_at < update.enqueued_at  # the poll was open before the update
    assert answered.answered_at is not None
    assert update.enqueued_at <= answered.answered_at  # and answered once it came
    assert answered.answered_at - answered.received_at < 5  # not at the poll's timeout
    delivery = update.first_delivery
    assert delivery is not None
    assert delivery.via == "getUpdates"
    assert update.enqueued_at <= delivery.at <= answered.answered_at


async def test_forum_topic_messages_and_replies(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    forum = await client.create_chat(
        "supergroup", members=[alice["id"]], forum=True, bot_is_admin=True
    )
    topic = await client.create_topic(forum["id"], "Table 1")
    await client.send_command(forum["id"], alice["id"], "start", message_thread_id=topic)

    reply = await client.wait_for_message(forum["id"])
    assert reply.message_thread_id == topic
    (update,) = await client.updates()
    message = update.payload["message"]
    assert (message["message_thread_id"], message["is_topic_message"]) == (topic, True)
    assert Update.de_json(update.payload, sample_bot.application.bot).effective_message is not None


async def test_presses_are_spaced_by_the_emulator_timer(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    bob = await client.create_user("Bob")
    group = await client.create_chat("group", members=[alice["id"], bob["id"]])
    await client.send_command(group["id"], alice["id"], "start")
    greeting = await client.wait_for_message(group["id"])

    await client.press_many(
        [
            Press(group["id"], greeting.message_id, alice["id"], data="flip"),
            Press(group["id"], greeting.message_id, bob["id"], data="flip", offset=0.04),
        ]
    )
    await client.wait_until_idle()

    presses = [u for u in await client.updates() if u.kind == "callback_query"]
    gap = presses[1].enqueued_at - presses[0].enqueued_at
    assert gap >= 0.04, "Bob's press comes at its offset, not before (a busy machine may be later)"
    assert presses[0].payload["callback_query"]["from"]["id"] == alice["id"]
    assert len([t for t in await client.toasts() if t.is_answered]) == 2


async def test_paused_delivery_holds_updates_back(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    await client.pause_delivery()
    await client.send_command(chat["id"], alice["id"], "start")
    (held,) = await client.updates()
    assert held.deliveries == []

    await client.resume_delivery()
    await client.wait_for_message(chat["id"])
    (delivered,) = await client.updates()
    assert delivered.first_delivery is not None


async def test_privacy_mode_hides_plain_group_messages(
    emulator: RunningEmulator, sample_bot: SampleBot
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    group = await client.create_chat("group", members=[alice["id"]])
    await client.send_text(group["id"], alice["id"], "just chatting")
    await client.send_command(group["id"], alice["id"], "start@some_other_bot")
    await client.send_command(group["id"], alice["id"], "start", mention_bot=True)
    await client.wait_for_message(group["id"])

    (update,) = await client.updates()
    assert update.payload["message"]["text"] == "/start@telesnap_test_bot"
    assert update.payload["message"]["entities"] == [
        {"type": "bot_command", "offset": 0, "length": 24}
    ]
