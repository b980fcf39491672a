"""How the emulator reads requests and checks them against the Bot API spec."""

from __future__ import annotations

import aiohttp

from telesnap.emulator.testing import RunningEmulator

from .raw import RawBotApi


async def test_get_me_by_query_string_with_any_letter_case(api: RawBotApi) -> None:
    status, body = await api.get("/GETME")
    assert status == 200
    assert body["result"]["username"] == "telesnap_test_bot"
    assert body["result"]["is_bot"] is True


async def test_unknown_method_and_wrong_token(api: RawBotApi, emulator: RunningEmulator) -> None:
    assert await api.error("sendTelepathy") == (404, "Not Found")
    async with api.session.get(f"{emulator.base_url}123:wrong/getMe") as response:
        assert response.status == 401
        assert (await response.json())["description"] == "Unauthorized"


async def test_form_encoded_values_are_coerced_to_declared_types(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    form = {
        "chat_id": str(chat["id"]),
        "text": "hi",
        "disable_notification": "true",
        "reply_markup": '{"inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]}',
    }
    status, body = await api.post("/sendMessage", data=form)
    assert status == 200, body
    assert body["result"]["chat"]["id"] == alice["id"]
    assert body["result"]["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "go"


async def test_missing_and_mistyped_parameters_are_violations(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    assert await api.error("sendMessage", text="hi") == (400, "Bad Request: chat_id is empty")
    status, description = await api.error("deleteMessage", chat_id=1, message_id="first")
    assert status == 400
    assert "message_id" in description

    violations = await emulator.client.violations()
    assert [(v.method, v.status) for v in violations] == [
        ("sendMessage", 400),
        ("deleteMessage", 400),
    ]
    assert violations[0].params == {"text": "hi"}


async def test_a_missing_text_is_worded_as_an_empty_one(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    empty = (400, "Bad Request: message text is empty")
    assert await api.error("sendMessage", chat_id=chat["id"]) == empty
    sent = await api.ok("sendMessage", chat_id=chat["id"], text="hi")
    edit = {"chat_id": chat["id"], "message_id": sent["message_id"]}
    assert await api.error("editMessageText", **edit) == empty


async def test_malformed_json_is_a_bad_request_in_the_bot_apis_shape(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    headers = {"Content-Type": "application/json"}
    for body in ("{bad json", "[1, 2]"):
        status, answer = await api.post("/sendMessage", data=body, headers=headers)
        assert status == 400
        assert answer["ok"] is False
        assert answer["error_code"] == 400
        assert answer["description"].startswith("Bad Request: ")
    violations = await emulator.client.violations()
    assert [(v.method, v.status) for v in violations] == [("sendMessage", 400)] * 2


async def test_multipart_upload_records_file_name_and_size(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    form = aiohttp.FormData()
    form.add_field("chat_id", str(chat["id"]))
    form.add_field("caption", "<i>rules</i>")
    form.add_field("parse_mode", "HTML")
    form.add_field("document", b"x" * 1234, filename="rules.txt", content_type="text/plain")
    status, body = await api.post("/sendDocument", data=form)
    assert status == 200, body
    assert body["result"]["document"]["file_name"] == "rules.txt"

    (sent,) = await emulator.client.transcript(chat["id"])
    assert (sent.kind, sent.file_name, sent.file_size, sent.text) == (
        "document",
        "rules.txt",
        1234,
        "rules",
    )


async def test_methods_not_emulated_answer_plausibly_and_are_listed(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    alice = await emulator.client.create_user("Alice")
    chat = await emulator.client.create_chat("private", members=[alice["id"]])
    assert await api.ok("setChatTitle", chat_id=chat["id"], title="x") is True
    dice = await api.ok("sendDice", chat_id=chat["id"])
    assert dice["chat"]["id"] == chat["id"]
    assert await emulator.client.not_emulated() == ["sendDice", "setChatTitle"]


async def test_every_call_is_logged_with_its_times(
    api: RawBotApi, emulator: RunningEmulator
) -> None:
    await api.ok("getMe")
    await api.error("getChat", chat_id=-42)
    calls = await emulator.client.calls()
    assert [(c.method, c.status) for c in calls] == [("getMe", 200), ("getChat", 400)]
    assert calls[1].description == "Bad Request: chat not found"
    assert all(c.answered_at is not None and c.received_at <= c.answered_at for c in calls)
