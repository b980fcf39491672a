"""Only the holder of the run's key, on this machine's address, uses the page and the control API.

A web site the operator visits can make their browser call the emulator's port
(cross-site, or through DNS rebinding under a name of its own); it knows
neither the key nor the address's right name. The bot's own ``/bot<token>/``
answers as Telegram's does.
"""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from yarl import URL

from telesnap.cli import build_parser
from telesnap.emulator.cli import main as emulator_main
from telesnap.emulator.cli import read_key
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.guard import KEY_HEADER
from telesnap.emulator.testing import RunningEmulator, running_emulator

from .raw import RawBotApi

PAGE_PATHS = ["/", "/page/sandbox.js", "/_emulator/state", "/_emulator/bot", "/_emulator/toasts"]


@pytest.mark.parametrize("path", PAGE_PATHS)
async def test_the_page_and_the_control_api_refuse_a_request_without_the_key(
    emulator: RunningEmulator, path: str
) -> None:
    async with aiohttp.ClientSession() as stranger, stranger.get(emulator.url + path) as refused:
        assert refused.status == 403
        assert "key of this run" in await refused.text()
    async with emulator.http_session() as page, page.get(emulator.url + path) as answered:
        assert answered.status == 200


async def test_a_wrong_key_is_refused(emulator: RunningEmulator) -> None:
    async with (
        aiohttp.ClientSession(headers={KEY_HEADER: "guessed"}) as stranger,
        stranger.get(f"{emulator.url}/_emulator/state") as refused,
    ):
        assert refused.status == 403


async def test_the_live_feed_refuses_a_socket_without_the_key(emulator: RunningEmulator) -> None:
    async with aiohttp.ClientSession() as stranger:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await stranger.ws_connect(f"{emulator.url}/_emulator/live")
    assert refused.value.status == 403


async def test_the_page_address_sets_the_key_as_a_cookie_for_the_pages_own_calls(
    emulator: RunningEmulator,
) -> None:
    page_url = emulator.server.page_url
    assert URL(page_url).query["k"] == emulator.emulator.config.access_key
    # A browser's jar: aiohttp's own takes cookies from an IP address only when "unsafe".
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
        async with browser.get(page_url) as first_load:
            assert first_load.status == 200
            cookie = first_load.cookies[emulator.server.guard.cookie_name]
            assert cookie["httponly"]
            assert cookie["samesite"] == "Strict"
        async with browser.get(f"{emulator.url}/_emulator/state") as state:
            assert state.status == 200
        async with browser.ws_connect(f"{emulator.url}/_emulator/live") as socket:
            assert (await socket.receive_json(timeout=10))["type"] == "state"


async def test_each_run_has_a_key_of_its_own() -> None:
    async with running_emulator() as first, running_emulator() as second:
        keys = {first.emulator.config.access_key, second.emulator.config.access_key}
    assert None not in keys
    assert len(keys) == 2


@pytest.mark.parametrize("host", ["attacker.example:{port}", "127.0.0.1:1", "rebound.test"])
async def test_a_request_under_another_host_name_is_refused_even_with_the_key(
    emulator: RunningEmulator, host: str
) -> None:
    port = URL(emulator.url).port
    headers = {"Host": host.format(port=port)}
    async with emulator.http_session() as page:
        for path in ["/", "/_emulator/state", f"/bot{emulator.token}/getMe"]:
            async with page.get(emulator.url + path, headers=headers) as refused:
                assert refused.status == 403, path
                assert "is not this server's address" in await refused.text()


async def test_localhost_is_this_machine(emulator: RunningEmulator) -> None:
    headers = {"Host": f"localhost:{URL(emulator.url).port}"}
    async with (
        emulator.http_session() as page,
        page.get(f"{emulator.url}/_emulator/state", headers=headers) as answered,
    ):
        assert answered.status == 200


async def test_a_call_from_another_sites_page_is_refused(emulator: RunningEmulator) -> None:
    evil = {"Origin": "https://evil.example"}
    async with emulator.http_session() as page:
        async with page.post(
            f"{emulator.url}/_emulator/users", json={"first_name": "Mallory"}, headers=evil
        ) as refused:
            assert refused.status == 403
            assert "https://evil.example" in await refused.text()
        async with page.post(
            f"{emulator.url}/bot{emulator.token}/setWebhook",
            json={"url": "http://127.0.0.1:9/hook"},
            headers=evil,
        ) as refused:
            assert refused.status == 403
        own = {"Origin": emulator.url}
        async with page.post(
            f"{emulator.url}/_emulator/users", json={"first_name": "Ann"}, headers=own
        ) as answered:
            assert answered.status == 200
    assert [u.first_name for u in emulator.emulator.world.users.values()] == [
        emulator.emulator.bot.first_name,
        "Ann",
    ]


async def test_the_bot_api_needs_only_the_bots_token(api: RawBotApi) -> None:
    me = await api.ok("getMe")
    assert me["is_bot"] is True


@pytest.mark.parametrize(
    "url",
    ["https://bot.example.org/hook", "http://10.0.0.5:8443/hook", "http://[2001:db8::1]/hook"],
)
async def test_set_webhook_refuses_an_address_off_this_machine(api: RawBotApi, url: str) -> None:
    status, description = await api.error("setWebhook", url=url)
    assert status == 400
    assert description.startswith("Bad Request: bad webhook: ")
    assert "only to this machine" in description
    info = await api.ok("getWebhookInfo")
    assert info["url"] == ""


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/hook", "http://localhost:9/", "http://[::1]:9/"]
)
async def test_set_webhook_takes_a_loopback_address(api: RawBotApi, url: str) -> None:
    assert await api.ok("setWebhook", url=url) is True
    assert (await api.ok("getWebhookInfo"))["url"] == url


async def test_public_webhooks_can_be_allowed_explicitly() -> None:
    async with running_emulator(EmulatorConfig(public_webhooks=True)) as running:
        raw = RawBotApi(running)
        try:
            assert await raw.ok("setWebhook", url="https://bot.example.org/hook") is True
            assert await raw.ok("deleteWebhook") is True
        finally:
            await raw.session.close()


def test_a_harness_gives_the_key_in_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chosen = tmp_path / "emulator.key"
    chosen.write_text("a-key-of-the-harness-0123\n", encoding="utf-8")
    assert read_key(chosen) == "a-key-of-the-harness-0123"
    chosen.write_text("short", encoding="utf-8")
    args = build_parser().parse_args(["emulator", "--key-file", str(chosen)])
    assert emulator_main(args) == 2
    assert "the key must be 16-256 of" in capsys.readouterr().err
