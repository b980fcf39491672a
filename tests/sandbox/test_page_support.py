"""What the sandbox hands the page besides the emulator's state: the first hint and the fonts."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from telesnap.emulator.state import CALLS_SHOWN
from tests.sandbox.helpers import ANN, keyed_session, running_sandbox


async def test_the_hint_names_the_groups_people_and_follows_a_rename(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path) as sandbox:
        assert sandbox.overview()["hint"] == (
            "Send /newgame in Ann's pane to open a game of Snap, "
            "press Join in Bob's pane, then Start in Ann's."
        )
        sandbox.emulator.world.user(ANN).first_name = "Zoë"
        assert "Send /newgame in Zoë's pane" in sandbox.overview()["hint"]


async def test_the_fonts_of_the_pictures_are_served_with_their_rules(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path) as sandbox, keyed_session(sandbox) as session:
        async with session.get(f"{sandbox.url}_sandbox/fonts.css") as response:
            assert response.status == 200
            assert response.content_type == "text/css"
            rules = await response.text()
        for family in ("DejaVu Sans", "Noto Sans Thai", "Noto Sans Arabic"):
            assert f'font-family: "{family}"' in rules
        assert "unicode-range: U+0E00-0E7F" in rules
        files = [part.split('"')[0] for part in rules.split('url("/_sandbox/fonts/')[1:]]
        assert len(files) == 4
        for name in files:
            async with session.get(f"{sandbox.url}_sandbox/fonts/{name}") as response:
                assert response.status == 200
                assert response.headers["Content-Type"] == "font/ttf"
                assert (await response.read())[:4] == b"\x00\x01\x00\x00"
        async with session.get(f"{sandbox.url}_sandbox/fonts/..%2Fapp.py") as response:
            assert response.status == 404


async def test_the_sandbox_api_refuses_a_request_without_the_runs_key(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path) as sandbox, aiohttp.ClientSession() as stranger:
        assert sandbox.page_url == f"{sandbox.url}?k={sandbox.key}"
        for method, path in [("GET", "_sandbox/"), ("POST", "_sandbox/people"), ("GET", "")]:
            async with stranger.request(method, sandbox.url + path, json={}) as refused:
                assert refused.status == 403, path
        assert len(sandbox.emulator.world.users) == 3, "nobody was added"
        evil = {"Origin": "http://evil.example", "X-Telesnap-Key": sandbox.key}
        async with stranger.post(
            f"{sandbox.url}_sandbox/clock/skip", json={"seconds": 600}, headers=evil
        ) as refused:
            assert refused.status == 403
        assert sandbox.clock.skipped_seconds == 0


def test_the_readme_says_how_many_calls_the_log_shows() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    the_sandbox = readme.split("## The sandbox\n", 1)[1].split("\n## ", 1)[0]
    said = " ".join(the_sandbox.split())
    assert "every Bot API call" not in said
    assert f"the latest {CALLS_SHOWN} Bot API calls" in said
