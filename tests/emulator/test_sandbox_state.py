"""What the sandbox page reads from the emulator: state, live changes, files, people, limits."""

from __future__ import annotations

import json

import aiohttp

from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.core import Emulator
from telesnap.emulator.network import NetworkDelay
from telesnap.emulator.state import StateFeed, message_json
from telesnap.emulator.testing import RunningEmulator, running_emulator
from telesnap.emulator.users import Press, schedule_presses, send_text

from .raw import RawBotApi


def emulator_with_group() -> tuple[Emulator, int, int]:
    emulator = Emulator()
    ann = emulator.world.add_user("Ann")
    chat = emulator.world.add_chat("group", title="Snap", member_ids=[ann.id])
    return emulator, ann.id, chat.id


def test_after_a_snapshot_only_new_and_changed_items_are_sent() -> None:
    emulator, ann, chat = emulator_with_group()
    feed = StateFeed(emulator)
    snapshot = feed.snapshot()
    assert snapshot["type"] == "state"
    assert {user["first_name"] for user in snapshot["users"]} == {"Ann", "Telesnap Test"}
    assert [c["title"] for c in snapshot["chats"]] == ["Snap"]
    assert feed.changes()["messages"] == []
    assert feed.changes()["users"] == []
    send_text(emulator, chat, ann, "hello")
    changes = feed.changes()
    assert [m["text"] for m in changes["messages"]] == ["hello"]
    assert changes["users"] == []
    assert changes["chats"] == []
    assert feed.changes()["messages"] == []


async def test_the_live_socket_sends_the_state_then_each_change(
    emulator: RunningEmulator,
) -> None:
    client = emulator.client
    ann = await client.create_user("Ann")
    chat = await client.create_chat("group", title="Snap", members=[ann["id"]])
    async with (
        emulator.http_session() as session,
        session.ws_connect(f"{emulator.url}/_emulator/live") as socket,
    ):
        first = json.loads((await socket.receive()).data)
        assert first["type"] == "state"
        assert any(c["title"] == "Snap" for c in first["chats"])
        await client.send_text(chat["id"], ann["id"], "Ann was here")
        while True:
            update = json.loads((await socket.receive(timeout=10)).data)
            assert update["type"] == "changes"
            if update["messages"]:
                break
        assert [m["text"] for m in update["messages"]] == ["Ann was here"]
        assert update["messages"][0]["sender_id"] == ann["id"]


async def test_an_upload_is_kept_and_served_by_get_file(emulator: RunningEmulator) -> None:
    client = emulator.client
    ann = await client.create_user("Ann")
    chat = await client.create_chat("group", title="Snap", members=[ann["id"]])
    content = b"seq\tkind\tjson\n1\tgame_started\t{}\n"
    base = f"{emulator.base_url}{emulator.token}"
    async with emulator.http_session() as session:
        form = aiohttp.FormData()
        form.add_field("chat_id", str(chat["id"]))
        form.add_field("document", content, filename="replay-1.tsv", content_type="text/plain")
        async with session.post(f"{base}/sendDocument", data=form) as response:
            sent = (await response.json())["result"]
        file_id = sent["document"]["file_id"]
        assert sent["document"]["file_name"] == "replay-1.tsv"
        async with session.post(f"{base}/getFile", json={"file_id": file_id}) as response:
            got = (await response.json())["result"]
        assert got["file_size"] == len(content)
        url = f"{emulator.url}/file/bot{emulator.token}/{got['file_path']}"
        async with session.get(url) as response:
            assert response.status == 200
            assert await response.read() == content
        async with session.get(f"{emulator.url}/_emulator/files/{file_id}") as response:
            assert await response.read() == content
            assert "replay-1.tsv" in response.headers["Content-Disposition"]
        async with session.get(f"{emulator.url}/file/botWRONG/{got['file_path']}") as response:
            assert response.status == 401


async def test_an_animation_is_sent_as_telegram_does_and_shown_inline(
    emulator: RunningEmulator,
) -> None:
    client = emulator.client
    ann = await client.create_user("Ann")
    chat = await client.create_chat("group", title="Snap", members=[ann["id"]])
    content = b"GIF89a" + bytes(40)
    base = f"{emulator.base_url}{emulator.token}"
    async with emulator.http_session() as session:
        form = aiohttp.FormData()
        form.add_field("chat_id", str(chat["id"]))
        form.add_field("animation", content, filename="game.gif", content_type="image/gif")
        async with session.post(f"{base}/sendAnimation", data=form) as response:
            sent = (await response.json())["result"]
        # Telegram repeats an animation as a document, for clients that know no animations.
        assert sent["animation"]["file_name"] == "game.gif"
        assert sent["document"]["file_id"] == sent["animation"]["file_id"]
        file_id = sent["animation"]["file_id"]
        async with session.get(f"{emulator.url}/_emulator/files/{file_id}") as response:
            assert await response.read() == content
            assert "Content-Disposition" not in response.headers, "the page plays it inline"


async def test_uploads_past_the_budget_forget_the_oldest() -> None:
    async with running_emulator(EmulatorConfig(file_store_bytes=20)) as running:
        raw = RawBotApi(running)
        try:
            ann = await running.client.create_user("Ann")
            chat = await running.client.create_chat("group", title="Snap", members=[ann["id"]])
            ids = []
            for name in ("a.txt", "b.txt"):
                form = aiohttp.FormData()
                form.add_field("chat_id", str(chat["id"]))
                form.add_field("document", b"x" * 15, filename=name, content_type="text/plain")
                async with raw.session.post(f"{raw.base}/sendDocument", data=form) as response:
                    ids.append((await response.json())["result"]["document"]["file_id"])
            forgotten = await raw.error("getFile", file_id=ids[0])
            assert forgotten == (400, "Bad Request: invalid file_id")
            assert (await raw.ok("getFile", file_id=ids[1]))["file_size"] == 15
        finally:
            await raw.session.close()


async def test_a_slow_users_press_reaches_the_bot_only_after_their_delay() -> None:
    emulator, ann, chat = emulator_with_group()
    message = emulator.world.add_message(emulator.world.chat(chat), emulator.bot)
    message.reply_markup = {"inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]}
    emulator.network[ann] = NetworkDelay(delay_ms=40, jitter_ms=0)
    schedule_presses(emulator, [Press(chat, message.message_id, ann, data="go")])
    assert list(emulator.updates.pending) == []
    assert not emulator.is_idle()
    arrived = await emulator.changes.wait_until(lambda: bool(emulator.updates.pending), 10.0)
    assert arrived
    assert emulator.updates.pending[0].kind == "callback_query"
    await emulator.close()


async def test_a_slow_users_message_shows_at_once_and_its_update_comes_later() -> None:
    emulator, ann, chat = emulator_with_group()
    emulator.network[ann] = NetworkDelay(delay_ms=40, jitter_ms=10)
    message_id, update = send_text(emulator, chat, ann, "/newgame")
    assert update is None
    assert emulator.world.messages[(chat, message_id)].text == "/newgame"
    assert list(emulator.updates.pending) == []
    assert await emulator.changes.wait_until(lambda: bool(emulator.updates.pending), 10.0)
    await emulator.close()


def test_a_network_delay_cannot_arrive_early() -> None:
    for delay, jitter in ((-1, 0), (10, 20)):
        try:
            NetworkDelay(delay, jitter)
        except ValueError:
            continue
        raise AssertionError(f"NetworkDelay({delay}, {jitter}) was accepted")


async def test_the_logs_keep_only_the_latest_entries() -> None:
    emulator = Emulator(EmulatorConfig(log_limit=3))
    ann = emulator.world.add_user("Ann")
    chat = emulator.world.add_chat("group", title="Snap", member_ids=[ann.id])
    for _ in range(10):
        await emulator.handle_call(emulator.config.token, "getMe", {})
    assert list(emulator.calls) == [7, 8, 9]
    message = emulator.world.add_message(chat, emulator.bot)
    message.reply_markup = {"inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]}
    ids = [
        schedule_presses(emulator, [Press(chat.id, message.message_id, ann.id, data="go")])[0]
        for _ in range(5)
    ]
    assert list(emulator.callback_queries) == ids[-3:]
    assert [update.update_id for update in emulator.updates.history] == [3, 4, 5]
    await emulator.close()


async def test_each_chat_keeps_its_latest_messages_and_their_latest_versions() -> None:
    emulator = Emulator(EmulatorConfig(messages_kept_per_chat=3, versions_kept_per_message=2))
    token = emulator.config.token
    ann = emulator.world.add_user("Ann")
    chat = emulator.world.add_chat("group", title="Snap", member_ids=[ann.id])
    sent = [
        await emulator.handle_call(token, "sendMessage", {"chat_id": chat.id, "text": f"m{n}"})
        for n in range(5)
    ]
    first, newest = (body["result"]["message_id"] for body in (sent[0], sent[-1]))
    feed = StateFeed(emulator)
    for text in ("v1", "v2", "v3", "v4"):
        feed.snapshot()
        edit = {"chat_id": chat.id, "message_id": newest, "text": text}
        assert (await emulator.handle_call(token, "editMessageText", edit))["ok"]
        (shown,) = feed.changes()["messages"]
        assert (shown["text"], shown["edits"]) == (text, int(text[1])), "the page sees each edit"

    assert [m.text for m in emulator.world.transcript(chat.id)] == ["m2", "m3", "v4"]
    (edited,) = (m for m in emulator.world.transcript(chat.id) if m.message_id == newest)
    assert ([r.text for r in edited.history], edited.edits) == (["v2", "v3"], 4)
    assert message_json(emulator, edited)["edits"] == 4
    forgotten = {"chat_id": chat.id, "message_id": first, "text": "again"}
    assert (await emulator.handle_call(token, "editMessageText", forgotten))["description"] == (
        "Bad Request: message to edit not found"
    )
    reply = {"chat_id": chat.id, "text": "re", "reply_parameters": {"message_id": first}}
    assert (await emulator.handle_call(token, "sendMessage", reply))["description"] == (
        "Bad Request: message to be replied not found"
    )
    await emulator.close()


async def test_people_can_be_renamed_made_admins_and_slowed(emulator: RunningEmulator) -> None:
    client = emulator.client
    ann = await client.create_user("Ann")
    chat = await client.create_chat("group", title="Snap", members=[ann["id"]])
    async with emulator.http_session() as session:
        base = f"{emulator.url}/_emulator"
        async with session.patch(
            f"{base}/users/{ann['id']}", json={"first_name": "Аня 🃏", "language_code": "mk"}
        ) as response:
            assert (await response.json())["first_name"] == "Аня 🃏"
        async with session.put(
            f"{base}/chats/{chat['id']}/members/{ann['id']}", json={"role": "administrator"}
        ) as response:
            assert await response.json() == {"status": "administrator"}
        async with session.put(
            f"{base}/users/{ann['id']}/network", json={"delay_ms": 80, "jitter_ms": 20}
        ) as response:
            assert response.status == 200
        async with session.patch(f"{base}/users/{ann['id']}", json={"first_name": ""}) as response:
            assert response.status == 400
        async with session.put(f"{base}/flood", json={"enabled": False}) as response:
            assert await response.json() == {"enabled": False}
        async with session.get(f"{base}/state") as response:
            state = await response.json()
    (shown,) = [u for u in state["users"] if u["id"] == ann["id"]]
    assert shown["first_name"] == "Аня 🃏"
    assert shown["language_code"] == "mk"
    assert shown["network"] == {"delay_ms": 80, "jitter_ms": 20}
    (group,) = [c for c in state["chats"] if c["id"] == chat["id"]]
    assert group["members"][str(ann["id"])] == "administrator"
    assert state["flood_limits"] is False


async def test_the_command_menu_is_the_narrowest_scope_in_the_users_language(
    emulator: RunningEmulator,
) -> None:
    client = emulator.client
    ann = await client.create_user("Ann", language_code="es")
    bob = await client.create_user("Bob", language_code="th")
    chat = await client.create_chat("group", title="Snap", members=[ann["id"], bob["id"]])
    raw = RawBotApi(emulator)
    control = emulator.http_session()
    try:
        await raw.ok("setMyCommands", commands=[{"command": "help", "description": "Help"}])
        await raw.ok(
            "setMyCommands",
            commands=[{"command": "ayuda", "description": "Ayuda"}],
            language_code="es",
        )
        await raw.ok(
            "setMyCommands",
            commands=[{"command": "newgame", "description": "Open a game here"}],
            scope={"type": "all_group_chats"},
        )
        async with control.get(
            f"{emulator.url}/_emulator/commands",
            params={"chat_id": str(chat["id"]), "user_id": str(ann["id"])},
        ) as response:
            assert [c["command"] for c in await response.json()] == ["newgame"]
        private = await client.create_chat("private", members=[ann["id"]])
        async with control.get(
            f"{emulator.url}/_emulator/commands",
            params={"chat_id": str(private["id"]), "user_id": str(ann["id"])},
        ) as response:
            assert [c["command"] for c in await response.json()] == ["ayuda"]
    finally:
        await control.close()
        await raw.session.close()


async def test_the_page_is_served_from_the_package(emulator: RunningEmulator) -> None:
    async with emulator.http_session() as session:
        async with session.get(f"{emulator.url}/") as response:
            page = await response.text()
            assert response.content_type == "text/html"
        assert '<script src="/page/sandbox.js">' in page
        async with session.get(f"{emulator.url}/page/sandbox.js") as response:
            assert "/_emulator/live" in await response.text()
        async with session.get(f"{emulator.url}/page/../core.py") as response:
            assert response.status == 404


async def test_edit_message_media_replaces_a_photo_with_a_new_upload(
    emulator: RunningEmulator,
) -> None:
    client = emulator.client
    ann = await client.create_user("Ann")
    chat = await client.create_chat("group", title="Snap", members=[ann["id"]])
    base = f"{emulator.base_url}{emulator.token}"
    async with emulator.http_session() as session:
        form = aiohttp.FormData()
        form.add_field("chat_id", str(chat["id"]))
        form.add_field("caption", "first")
        form.add_field("photo", b"first picture", filename="a.png", content_type="image/png")
        async with session.post(f"{base}/sendPhoto", data=form) as response:
            sent = (await response.json())["result"]
        form = aiohttp.FormData()
        form.add_field("chat_id", str(chat["id"]))
        form.add_field("message_id", str(sent["message_id"]))
        media = {"type": "photo", "media": "attach://picture", "caption": "<b>second</b>"}
        form.add_field("media", json.dumps({**media, "parse_mode": "HTML"}))
        form.add_field("picture", b"second picture", filename="b.png", content_type="image/png")
        async with session.post(f"{base}/editMessageMedia", data=form) as response:
            body = await response.json()
        assert response.status == 200, body
        edited = body["result"]
        assert edited["caption"] == "second"
        new_id = edited["photo"][0]["file_id"]
        assert new_id != sent["photo"][0]["file_id"]
        async with session.get(f"{emulator.url}/_emulator/files/{new_id}") as response:
            assert await response.read() == b"second picture"
        bad = aiohttp.FormData()
        bad.add_field("chat_id", str(chat["id"]))
        bad.add_field("message_id", str(sent["message_id"]))
        bad.add_field("media", json.dumps({"type": "photo", "media": "attach://missing"}))
        async with session.post(f"{base}/editMessageMedia", data=bad) as response:
            assert response.status == 400
    (photo,) = await client.transcript(chat["id"])
    assert photo.text == "second"
    assert [revision.text for revision in photo.history] == ["first"]
    assert "editMessageMedia" not in await client.not_emulated()
