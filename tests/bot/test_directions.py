"""Arabic messages read right to left with whole commands, and what people typed is shown as typed.

Every line of an Arabic message, caption included, starts with a right-to-left mark and each
command of the bot is a left-to-right isolate; a name or a chat title is never changed, even
when it holds something that looks like a command or a tag.
"""

from __future__ import annotations

import dataclasses
import html
from types import SimpleNamespace
from typing import Any, cast

import pytest

from telesnap.bot.handlers.runtime import Answerer, Runtime
from telesnap.bot.handlers.stats import (
    MAX_CAPTION,
    StatsBot,
    _send_stats,
    replay_caption,
    send_leaderboard,
)
from telesnap.bot.render.i18n import FSI, LRI, PDI, RLM, directed, translator
from telesnap.bot.render.lobby import render_lobby
from telesnap.bot.render.notices import render_notice
from telesnap.bot.render.stats import StatsButtonSigner
from telesnap.emulator.formatting import parse_html, utf16_length
from telesnap.services.outbox.rows import Notice, NoticeKind
from telesnap.services.stats.views import BoardEntry, LeaderboardView, PlayerStatsView, Ranking
from telesnap.services.types import Place
from telesnap.services.views import LobbyView

from .test_captions import LONG_NAMES, Uploads, game_of
from .test_stats_text import HERE

ARABIC = translator("ar")
TYPED_NAMES = ("AC /dc", "<b>Ann</b>", "Bo /join@snap_bot 3", "نادي سناب /club")
"""Names and titles as people type them: a slash, a tag, a command with arguments."""


def lines_right_to_left(text: str) -> bool:
    return all(line.startswith(RLM) for line in text.split("\n") if line)


@pytest.mark.parametrize("typed", TYPED_NAMES)
def test_a_name_in_an_arabic_lobby_is_shown_as_typed(typed: str) -> None:
    lobby = LobbyView(game_id=7, creator_id=1, players=((1, typed), (2, "محمد")), status="lobby")
    text = render_lobby(lobby, ARABIC)
    assert f"• {FSI}{html.escape(typed, quote=False)}{PDI}" in text
    assert LRI not in text
    assert lines_right_to_left(text)


@pytest.mark.parametrize("typed", TYPED_NAMES)
def test_a_chat_title_in_an_arabic_lobby_notice_is_shown_as_typed(typed: str) -> None:
    notice = Notice(NoticeKind.LOBBY_OPENED, {"name": "Ann", "chat": typed, "link": None})
    text = directed(render_notice(notice, ARABIC), ARABIC)
    assert f"<b>{FSI}{html.escape(typed, quote=False)}{PDI}</b>" in text
    # Only the bot's own command is a left-to-right isolate.
    assert text.count(LRI) == 1
    assert f"{LRI}/notify off{PDI}" in text


def test_a_link_and_a_tag_are_left_whole() -> None:
    markup = '<a href="/join">x</a> <code>/replay 6</code>'
    expected = f'{RLM}<a href="/join">x</a> <code>{LRI}/replay 6{PDI}</code>'
    assert directed(markup, ARABIC) == expected


@pytest.mark.parametrize(
    "text",
    ["/replay 6\nمرحبا", "<b>AC /dc</b> /join", f"{FSI}AC /dc{PDI}\n\n<code>/replay 3 file</code>"],
)
def test_directing_twice_changes_nothing(text: str) -> None:
    once = directed(text, ARABIC)
    assert directed(once, ARABIC) == once


@pytest.mark.parametrize("film", [True, False])
def test_an_arabic_replay_caption_reads_right_to_left(film: bool) -> None:
    caption = replay_caption(game_of(TYPED_NAMES, TYPED_NAMES[:1]), ARABIC, film=film)
    assert lines_right_to_left(caption), caption
    for typed in TYPED_NAMES:
        assert f"{FSI}{html.escape(typed, quote=False)}{PDI}" in caption
    # Under the film, the hint's command reads whole; nothing else is a command.
    assert caption.count(LRI) == film
    if film:
        assert f"<code>{LRI}/replay 42 file{PDI}</code>" in caption


def test_a_long_arabic_replay_caption_is_cut_after_its_marks_are_counted() -> None:
    caption = replay_caption(game_of(LONG_NAMES, LONG_NAMES[:6]), ARABIC, film=True)
    assert caption.startswith(RLM)
    text, _entities = parse_html(directed(caption, ARABIC))  # as the answer sends it
    assert utf16_length(text) <= MAX_CAPTION


def test_an_arabic_answers_caption_reads_right_to_left() -> None:
    runtime = Uploads()
    answer = Answerer(cast("Runtime", runtime), Place(-1), 7, ARABIC, reply_to=1)
    caption = "📊 <b>x</b>\n<code>/replay 3 file</code>"
    assert answer.upload("photo", b"png", "stats.png", caption)
    ((kind, sent),) = runtime.uploaded
    assert kind == "photo"
    assert sent == f"{RLM}📊 <b>x</b>\n{RLM}<code>{LRI}/replay 3 file{PDI}</code>"


async def test_an_arabic_leaderboard_caption_is_directed_once_and_names_kept() -> None:
    entries = tuple(
        BoardEntry(n, n, TYPED_NAMES[n % 4], dataclasses.replace(HERE, wins=10 - n))
        for n in range(1, 9)
    )
    view = LeaderboardView(-1, False, Ranking.WINS, entries, 5, 5, unlisted=0)
    runtime = Uploads()
    answer = Answerer(cast("Runtime", runtime), Place(-1), 7, ARABIC, reply_to=1)
    await send_leaderboard(answer, view, StatsButtonSigner(b"secret").in_chat(-1))
    ((kind, caption),) = runtime.uploaded
    assert kind == "photo"
    assert lines_right_to_left(caption)
    assert f"{RLM}{RLM}" not in caption
    assert LRI not in caption
    assert f"{FSI}AC /dc{PDI}" in caption


async def test_an_arabic_stats_charts_caption_reads_right_to_left() -> None:
    view = PlayerStatsView(7, "AC /dc", HERE, HERE, ((400, 3),), (1000.0, 1093.0), (), 2)

    async def player(*_args: object) -> PlayerStatsView:
        return view

    stats_bot = SimpleNamespace(service=SimpleNamespace(player=player))
    person = SimpleNamespace(id=7, full_name="AC /dc", is_bot=False)
    message = SimpleNamespace(from_user=person, reply_to_message=None)
    runtime = Uploads()
    answer = Answerer(cast("Runtime", runtime), Place(-1), 7, ARABIC, reply_to=1)
    await _send_stats(answer, cast("StatsBot", stats_bot), cast("Any", message))
    ((kind, caption),) = runtime.uploaded
    assert kind == "photo"
    assert lines_right_to_left(caption), caption
    assert f"{FSI}AC /dc{PDI}" in caption
    assert LRI not in caption
