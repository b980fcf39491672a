"""Whole games in Arabic and in Thai: every text the players see is in their language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from telesnap.bot.render.i18n import LRI, PDI, RLM, translator
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with
from .stats_helpers import wait_for_kind

NAMES = ("Ann", "Bob", "Cid")


def english_free(text: str) -> bool:
    """No English word of the table format is left (names and cards may be Latin)."""
    return not any(word in text for word in ("face-down", "face-up", "Turn:", "wins", "flips"))


async def newest(table: Table, after: int) -> TranscriptMessage:
    return await table.client.wait_for_message(
        table.chat_id, lambda m: m.message_id > after and bool(m.text)
    )


@pytest.mark.parametrize("language", ["ar", "th"])
async def test_a_whole_game_in_the_chat_language(
    emulator: RunningEmulator, tmp_path: Path, language: str
) -> None:
    tr = translator(language)
    async with table_with(
        emulator,
        database_file(tmp_path),
        NAMES,
        admins=["Ann"],
        languages=dict.fromkeys(NAMES, language),
    ) as table:
        await table.command("Ann", "settings", "flip_limit 12")
        await table.command("Ann", "settings", f"language {language}")
        await table.client.wait_until_idle()
        await table.command("Ann", "newgame")
        lobby = await table.client.wait_for_message(table.chat_id, lambda m: bool(m.buttons))
        assert lobby.button_texts == [tr.gettext("Join"), tr.gettext("Leave"), tr.gettext("Start")]
        for name in NAMES[1:]:
            toast = await table.press_action(name, lobby, "j")
            assert toast.text == tr.gettext("You joined the game.")
        await table.press_action("Ann", lobby, "b")
        board = await newest(table, lobby.message_id)
        for _ in range(40):
            if not board.buttons:
                break
            assert board.button_texts[:2] == [tr.gettext("Flip"), tr.gettext("Snap!")]
            assert english_free(board.text), board.text
            for name in NAMES:
                assert name in board.text
            for name in NAMES:  # whoever's turn it is flips; the others are told it is not
                toast = await table.press_action(name, board, "f")
                if toast.text == "":
                    break
                assert toast.text == tr.gettext("It is not your turn to flip.")
            board = await newest(table, board.message_id)
        assert not board.buttons, "the game did not end by its flip limit"
        winner_line = tr.gettext("🏆 {name} wins the game!").split("{name}")
        assert all(part.strip() in board.text for part in winner_line if part.strip())
        ended = tr.ngettext(
            "The flip limit ({count} flip) was reached: the most cards wins.",
            "The flip limit ({count} flips) was reached: the most cards wins.",
            12,
        ).format(count=12)
        assert ended in board.text
        number = re.search(r"#(\d+)", board.text)
        assert number is not None, board.text
        if language == "ar":  # the command reads whole: "/replay 6", never "replay 6/"
            assert f"{LRI}/replay {number[1]}{PDI}" in board.text
            await arabic_captions_read_right_to_left(table, number[1])
        else:
            assert f"/replay {number[1]}" in board.text


async def arabic_captions_read_right_to_left(table: Table, game_id: str) -> None:
    """The captions of /replay's film and file, as an Arabic chat reads them."""
    await table.command("Ann", "replay", game_id)
    film = await wait_for_kind(table, "animation", f"#{game_id}")
    assert f"{LRI}/replay {game_id} file{PDI}" in film.text
    await table.command("Ann", "replay", f"{game_id} file")
    document = await wait_for_kind(table, "document", f"#{game_id}")
    for caption in (film.text, document.text):
        assert all(line.startswith(RLM) for line in caption.split("\n") if line), caption
