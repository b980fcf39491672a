"""/replay's caption is cut on its text, never inside a tag or a character reference."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from telesnap.bot.handlers.stats import MAX_CAPTION, replay_caption, within_length
from telesnap.bot.render.i18n import translator
from telesnap.emulator.formatting import parse_html, utf16_length
from telesnap.services.stats.views import GameLine

LONG_NAMES = tuple(f"<Player & {'𝓧' * 40} {n}>" for n in range(12))


def game_of(players: tuple[str, ...], winners: tuple[str, ...]) -> GameLine:
    return GameLine(
        game_id=42,
        started_at=datetime(2026, 11, 30, 10, tzinfo=UTC),
        ended_at=datetime(2026, 11, 30, 11, tzinfo=UTC),
        players=players,
        winners=winners,
        end_reason="limit",
        flips=300,
        operations=900,
        rated=True,
    )


@pytest.mark.parametrize("language", ["en", "ar"])
def test_a_long_replay_caption_still_parses_and_fits(language: str) -> None:
    caption = replay_caption(game_of(LONG_NAMES, LONG_NAMES[:6]), translator(language))
    text, _entities = parse_html(caption)  # raises as Telegram would on broken HTML
    assert utf16_length(text) <= MAX_CAPTION
    assert text.startswith("#42")
    assert text.endswith("…")


def test_a_short_caption_is_left_whole() -> None:
    caption = replay_caption(game_of(("Ann", "Bob"), ("Ann",)), translator("en"))
    text, _ = parse_html(caption)
    assert "telesnap replay FILE" in text
    assert not text.endswith("…")


@pytest.mark.parametrize("limit", range(1, 30))
def test_cutting_anywhere_gives_html_that_parses(limit: int) -> None:
    markup = "<b>Ann &amp; Bob</b> beat <i>Cid &lt;3</i> and <a href='tg://user?id=1'>Dan</a>"
    cut = within_length(markup, limit)
    text, _ = parse_html(cut)
    assert utf16_length(text) <= limit
    full, _ = parse_html(markup)
    assert full.startswith(text.removesuffix("…"))
