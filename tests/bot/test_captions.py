"""Captions are cut to Telegram's limit on their text, never inside a tag or a reference."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import cast

import pytest

from telesnap.bot.handlers.runtime import Answerer, Runtime
from telesnap.bot.handlers.stats import (
    MAX_CAPTION,
    replay_caption,
    send_leaderboard,
    within_length,
)
from telesnap.bot.ingress.gate import IntakeGate
from telesnap.bot.render.boards import shown_length
from telesnap.bot.render.i18n import RLM, directed, translator
from telesnap.bot.render.stats import StatsButtonSigner, render_leaderboard
from telesnap.emulator.formatting import parse_html, utf16_length
from telesnap.services.stats.views import BoardEntry, GameLine, LeaderboardView, Ranking
from telesnap.services.types import Place

from .test_stats_text import HERE

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
    assert text.removeprefix(RLM).startswith("#42")  # an Arabic line starts with its mark
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


class Uploads:
    """A runtime's say and upload, kept to look at (nothing is sent)."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.uploaded: list[tuple[str, str]] = []
        self.gate = IntakeGate()

    def say(self, _place: Place, text: str, *_args: object, **_kwargs: object) -> None:
        self.said.append(text)

    def upload(
        self, _place: Place, kind: str, _data: bytes, _name: str, caption: str, *_a: object
    ) -> None:
        self.uploaded.append((kind, caption))


async def test_a_leaderboard_too_long_for_a_caption_is_still_a_picture_with_its_caption_cut() -> (
    None
):
    long_name = "Player " + "x" * 56 + " " + "y" * 64  # a first and last name at Telegram's limits
    entries = tuple(
        BoardEntry(n, n, f"{long_name} {n}", dataclasses.replace(HERE, wins=10 - n))
        for n in range(1, 9)
    )
    view = LeaderboardView(-1, False, Ranking.WINS, entries, 5, 5, unlisted=0)
    tr = translator("en")
    assert utf16_length(parse_html(render_leaderboard(view, tr))[0]) > MAX_CAPTION
    runtime = Uploads()
    signer = StatsButtonSigner(b"secret").in_chat(-1)
    answer = Answerer(cast("Runtime", runtime), Place(-1), 7, tr, reply_to=1)
    await send_leaderboard(answer, view, signer)
    assert runtime.said == []
    ((kind, caption),) = runtime.uploaded
    assert kind == "photo"
    text, _ = parse_html(caption)
    assert utf16_length(text) <= MAX_CAPTION
    assert text.startswith("🏆")


@pytest.mark.parametrize("ranking", [Ranking.RATING, Ranking.WINS])
async def test_a_cut_caption_keeps_who_is_listed_and_counts_the_rows_it_lost(
    ranking: Ranking,
) -> None:
    long_name = "Player " + "x" * 56 + " " + "y" * 64
    entries = tuple(
        BoardEntry(n, n, f"{long_name} {n}", dataclasses.replace(HERE, wins=10 - n))
        for n in range(1, 11)
    )
    view = LeaderboardView(-1, False, ranking, entries, 5, 5, unlisted=0, more=4)
    tr = translator("en")
    runtime = Uploads()
    answer = Answerer(cast("Runtime", runtime), Place(-1), 7, tr, reply_to=1)
    await send_leaderboard(answer, view, StatsButtonSigner(b"secret").in_chat(-1))
    ((_, caption),) = runtime.uploaded
    text, _ = parse_html(caption)
    assert utf16_length(text) <= MAX_CAPTION
    assert "Listed after 5 rated games." in text
    rows = [line for line in text.splitlines() if line.startswith(tuple("0123456789"))]
    assert 0 < len(rows) < len(entries)
    assert f"…and {len(entries) + view.more - len(rows)} more players" in text
    with_one_more = dataclasses.replace(
        view, entries=entries[: len(rows) + 1], more=len(entries) + view.more - len(rows) - 1
    )
    assert shown_length(directed(render_leaderboard(with_one_more, tr), tr)) > MAX_CAPTION, (
        "no row is lost that would fit"
    )
