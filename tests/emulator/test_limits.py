"""Flood control and callback answer deadlines, with a fake clock instead of sleeping."""

from __future__ import annotations

from telesnap.emulator.testing import FakeClock, RunningEmulator, running_emulator
from telesnap.emulator.users import Press

from .raw import RawBotApi


async def test_group_allows_20_messages_and_edits_per_rolling_minute(
    clocked_api: RawBotApi, clocked_emulator: RunningEmulator, fake_clock: FakeClock
) -> None:
    client = clocked_emulator.client
    alice = await client.create_user("Alice")
    group = await client.create_chat("group", members=[alice["id"]])
    first = await clocked_api.ok("sendMessage", chat_id=group["id"], text="0")
    for n in range(1, 19):
        fake_clock.advance(0.5)
        await clocked_api.ok("sendMessage", chat_id=group["id"], text=str(n))
    await clocked_api.ok(
        "editMessageText", chat_id=group["id"], message_id=first["message_id"], text="edited"
    )

    status, body = await clocked_api.call("sendMessage", chat_id=group["id"], text="one too many")
    assert status == 429
    assert body["description"] == "Too Many Requests: retry after 51"
    assert body["parameters"] == {"retry_after": 51}

    fake_clock.advance(51)
    await clocked_api.ok("sendMessage", chat_id=group["id"], text="after the wait")


async def test_private_chat_allows_a_small_burst_then_one_a_second(
    clocked_api: RawBotApi, clocked_emulator: RunningEmulator, fake_clock: FakeClock
) -> None:
    alice = await clocked_emulator.client.create_user("Alice")
    chat = await clocked_emulator.client.create_chat("private", members=[alice["id"]])
    for n in range(3):
        await clocked_api.ok("sendMessage", chat_id=chat["id"], text=str(n))
    status, body = await clocked_api.call("sendMessage", chat_id=chat["id"], text="burst over")
    assert (status, body["parameters"]["retry_after"]) == (429, 1)
    for n in range(3):  # then one a second, not another burst
        fake_clock.advance(1)
        await clocked_api.ok("sendMessage", chat_id=chat["id"], text=f"later {n}")
        status, _ = await clocked_api.call("sendMessage", chat_id=chat["id"], text="too soon")
        assert status == 429
    fake_clock.advance(3)
    for n in range(3):  # a quiet while fills the burst again
        await clocked_api.ok("sendMessage", chat_id=chat["id"], text=f"burst {n}")


async def test_whole_bot_allows_30_messages_a_second(
    clocked_api: RawBotApi, clocked_emulator: RunningEmulator
) -> None:
    client = clocked_emulator.client
    alice = await client.create_user("Alice")
    groups = [await client.create_chat("group", members=[alice["id"]]) for _ in range(31)]
    for group in groups[:30]:
        await clocked_api.ok("sendMessage", chat_id=group["id"], text="hi")
    status, body = await clocked_api.call("sendMessage", chat_id=groups[30]["id"], text="hi")
    assert (status, body["parameters"]["retry_after"]) == (429, 1)
    violations = await client.violations()
    assert [v.status for v in violations] == [429]


async def test_flood_limits_can_be_switched_off() -> None:
    async with running_emulator(flood_limits=False) as emulator:
        api = RawBotApi(emulator)
        alice = await emulator.client.create_user("Alice")
        group = await emulator.client.create_chat("group", members=[alice["id"]])
        for n in range(40):
            await api.ok("sendMessage", chat_id=group["id"], text=str(n))
        await api.session.close()


async def test_callback_answered_once_and_in_time(
    clocked_api: RawBotApi, clocked_emulator: RunningEmulator, fake_clock: FakeClock
) -> None:
    client = clocked_emulator.client
    alice = await client.create_user("Alice")
    chat = await client.create_chat("private", members=[alice["id"]])
    markup = {"inline_keyboard": [[{"text": "Flip", "callback_data": "flip"}]]}
    sent = await clocked_api.ok("sendMessage", chat_id=chat["id"], text="Deal", reply_markup=markup)
    first, late = await client.press_many(
        [
            Press(chat["id"], sent["message_id"], alice["id"], data="flip"),
            Press(chat["id"], sent["message_id"], alice["id"], button_text="Flip"),
        ]
    )
    too_old = "Bad Request: query is too old and response timeout expired or query ID is invalid"

    assert await clocked_api.error(
        "answerCallbackQuery", callback_query_id=first, text="x" * 201
    ) == (400, "Bad Request: MESSAGE_TOO_LONG")
    await clocked_api.ok(
        "answerCallbackQuery", callback_query_id=first, text="Flipped", show_alert=True
    )
    assert await clocked_api.error("answerCallbackQuery", callback_query_id=first) == (400, too_old)
    fake_clock.advance(15.5)
    assert await clocked_api.error("answerCallbackQuery", callback_query_id=late) == (400, too_old)

    toasts = {toast.callback_query_id: toast for toast in await client.toasts()}
    assert (toasts[first].text, toasts[first].show_alert, toasts[first].answered_at) == (
        "Flipped",
        True,
        1000.0,
    )
    assert not toasts[late].is_answered
