"""getUpdates as Telegram answers it: offsets, one poller at a time, privacy mode in groups."""

from __future__ import annotations

import asyncio
from typing import Any

from telesnap.emulator.testing import RunningEmulator

from .raw import RawBotApi


async def _three_waiting(emulator: RunningEmulator) -> int:
    """Three commands the bot has not fetched yet; return the private chat's id."""
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    for command in ("one", "two", "three"):
        await emulator.client.send_command(chat["id"], alice["id"], command)
    return int(chat["id"])


def _texts(updates: list[dict[str, Any]]) -> list[str]:
    return [update["message"]["text"] for update in updates]


async def test_an_offset_confirms_updates_never_fetched(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    await _three_waiting(emulator)
    (first, second, third) = (update.update_id for update in await emulator.client.updates())
    assert _texts(await api.ok("getUpdates", offset=third)) == ["/three"]
    assert _texts(await api.ok("getUpdates", offset=third + 1)) == []
    assert [update.confirmed for update in await emulator.client.updates()] == [True] * 3
    assert (first, second) == (third - 2, third - 1)


async def test_a_negative_offset_keeps_only_the_latest_updates(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    await _three_waiting(emulator)
    assert _texts(await api.ok("getUpdates", offset=-1)) == ["/three"]
    assert _texts(await api.ok("getUpdates")) == ["/three"], "the others are forgotten"


async def test_a_redelivered_update_waits_for_its_turn_past_the_offset(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    await _three_waiting(emulator)
    updates = await api.ok("getUpdates")
    next_offset = updates[-1]["update_id"] + 1
    await api.ok("getUpdates", offset=next_offset)
    await emulator.client.redeliver(updates[0]["update_id"])
    assert _texts(await api.ok("getUpdates", offset=next_offset)) == ["/one"]
    assert _texts(await api.ok("getUpdates", offset=next_offset)) == []


async def test_a_second_poll_ends_the_waiting_one_with_a_conflict(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    older = asyncio.ensure_future(api.call("getUpdates", timeout=5))
    await emulator.client.wait_for_call("getUpdates", lambda call: call.answered_at is None)
    newer = asyncio.ensure_future(api.call("getUpdates", timeout=5))

    status, body = await asyncio.wait_for(older, 2)
    assert (status, body["description"]) == (
        409,
        "Conflict: terminated by other getUpdates request; "
        "make sure that only one bot instance is running",
    )
    await emulator.client.send_command(chat["id"], alice["id"], "start")
    status, body = await asyncio.wait_for(newer, 2)
    assert status == 200
    assert _texts(body["result"]) == ["/start"]


async def test_privacy_mode_lets_replies_to_the_bot_and_mentions_through(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    client = emulator.client
    alice = await client.create_user("Alice")
    bob = await client.create_user("Bob")
    group = await client.create_chat("group", members=[alice["id"], bob["id"]])
    board = await api.ok("sendMessage", chat_id=group["id"], text="Board")
    chatter = await client.send_text(group["id"], alice["id"], "nice board")
    await client.send_text(group["id"], bob["id"], "to Alice", reply_to=chatter)
    await client.send_text(group["id"], bob["id"], "to the bot", reply_to=board["message_id"])
    await client.send_text(group["id"], bob["id"], "hey @Telesnap_Test_Bot, deal")
    await client.send_text(group["id"], bob["id"], "mail me@telesnap_test_bot.example")

    assert _texts(await api.ok("getUpdates")) == ["to the bot", "hey @Telesnap_Test_Bot, deal"]
