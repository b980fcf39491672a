"""What the sandbox hands the page besides the emulator's state: the first hint and the fonts."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.sandbox.helpers import ANN, running_sandbox


async def test_the_hint_names_the_groups_people_and_follows_a_rename(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path) as sandbox:
        assert sandbox.overview()["hint"] == (
            "Send /newgame in Ann's pane to open a game of Snap, "
            "press Join in Bob's pane, then Start in Ann's."
        )
        sandbox.emulator.world.user(ANN).first_name = "Zoë"
        assert "Send /newgame in Zoë's pane" in sandbox.overview()["hint"]


async def test_the_fonts_of_the_pictures_are_served_with_their_rules(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path) as sandbox, aiohttp.ClientSession() as session:
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
