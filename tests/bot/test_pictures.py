"""Pictures: the /stats chart and the leaderboard table in every language, with its own script.

pytest turns warnings into errors, and matplotlib warns "Glyph ... missing from
font(s)" for every character it draws as the missing-glyph box, so rendering a
picture here fails if any character of it has no font.
"""

from __future__ import annotations

import gettext
import io
import unicodedata
from collections import Counter
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image
from telegram import Bot

from telesnap.bot.delivery.direct import PhotoEditPost, UploadPost
from telesnap.bot.handlers.runtime import Answerer, Runtime
from telesnap.bot.handlers.stats import send_leaderboard
from telesnap.bot.ingress.gate import IntakeGate
from telesnap.bot.render import chart_fonts, charts
from telesnap.bot.render.chart_fonts import chart_text, drawable, families_for
from telesnap.bot.render.charts import (
    leaderboard_figure,
    leaderboard_picture,
    stats_chart,
    stats_figure,
)
from telesnap.bot.render.i18n import DEFAULT_LANGUAGE, LANGUAGES, translator
from telesnap.bot.render.stats import (
    PICTURE_MIN_ENTRIES,
    StatsButtonSigner,
    leaderboard_keyboard,
    leaderboard_rows,
    leaderboard_title,
    render_leaderboard,
)
from telesnap.emulator.testing import running_emulator
from telesnap.services.stats.views import BoardEntry, Figures, LeaderboardView, Ranking
from telesnap.services.types import Place

REACTIONS = sorted(Counter(180 + (index * 37) % 700 for index in range(40)).items())
"""``(reaction_ms, calls)``, as the stats keep them."""
RATINGS = [0.0, 1.5, 2.1, 3.3, 2.9, 4.2]
CHART_TEXTS = (
    "Reaction times (ms)",
    "Rating after each rated game",
    "calls",
    "all chats",
    "this chat",
    "rated games",
)
NAMES = ("Ann", "محمد علي", "สมชาย ใจดี", "Јован 🦊", "$x^2$ Bob", "Zawadi")


def _texts(figure: Figure) -> list[str]:
    return [text.get_text() for text in figure.findobj(Text) if text.get_text()]


def _is_png(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        return image.size


def _scripts(texts: list[str]) -> set[str]:
    return {unicodedata.name(char).split()[0] for text in texts for char in text if char.isalpha()}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_stats_chart_is_drawn_in_every_language(language: str) -> None:
    tr = translator(language)
    assert _is_png(stats_chart(REACTIONS, RATINGS, RATINGS[:3], tr)) == (640, 256)
    texts = _texts(stats_figure(REACTIONS, RATINGS, RATINGS[:3], tr))
    for english in CHART_TEXTS:
        assert chart_text(tr.gettext(english)) in texts, english
        if language != DEFAULT_LANGUAGE:
            assert english not in texts, english


def test_thai_and_arabic_charts_are_in_their_own_script() -> None:
    assert "THAI" in _scripts(_texts(stats_figure(REACTIONS, RATINGS, [], translator("th"))))
    assert "ARABIC" in _scripts(_texts(stats_figure(REACTIONS, RATINGS, [], translator("ar"))))


def test_a_chart_without_timed_calls_says_so() -> None:
    tr = translator("sw")
    texts = _texts(stats_figure([], RATINGS, [], tr))
    assert tr.gettext("no timed calls yet") in texts


def test_the_chart_counts_in_whole_numbers() -> None:
    """Three calls make no tick at 0.6 or 1.2: calls, games and ms are whole numbers."""
    figure = stats_figure([(300, 1), (320, 2), (410, 1)], [1000.0, 1012.4], [], translator("en"))
    reaction_axes, rating_axes = figure.axes
    for axes in (reaction_axes, rating_axes):
        for ticks in (axes.get_xticks(), axes.get_yticks()):
            assert len(ticks) >= 2
            assert all(float(tick).is_integer() for tick in ticks), ticks


def test_every_game_in_this_chat_draws_one_rating_line() -> None:
    tr = translator("en")
    figure = stats_figure(REACTIONS, RATINGS, RATINGS, tr)
    rating_axes = figure.axes[1]
    assert len(rating_axes.get_lines()) == 1
    assert [text.get_text() for text in rating_axes.get_legend().get_texts()] == [
        "this chat and all chats"
    ]
    apart = stats_figure(REACTIONS, RATINGS, RATINGS[:3], tr).axes[1]
    assert len(apart.get_lines()) == 2


def test_a_missing_glyph_is_caught() -> None:
    """The check above is live: Thai in a font without Thai warns (an error in our tests)."""
    figure = Figure()
    FigureCanvasAgg(figure)
    figure.text(0.1, 0.5, "สมชาย", family=["DejaVu Sans"])
    with pytest.warns(UserWarning, match="missing from font"):
        figure.savefig(io.BytesIO(), format="png")


def test_the_packaged_fonts_are_registered() -> None:
    assert chart_fonts.register_fonts() == ("Noto Sans Arabic", "Noto Sans Thai")
    assert families_for("th")[0] == "Noto Sans Thai"
    assert families_for("ar")[0] == "Noto Sans Arabic"
    assert families_for("mk")[0] == "DejaVu Sans"


def test_characters_no_font_has_are_left_out() -> None:
    assert drawable("Јован 🦊", "mk") == "Јован"
    assert drawable("🦊🦊", "es") == "?"
    assert drawable("นิ้ว", "es") == "นิ้ว"  # from the Thai fallback font


def test_arabic_is_shaped_and_reordered_where_matplotlib_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "لوحة الصدارة"
    monkeypatch.setattr(chart_fonts, "LAYS_OUT_TEXT", False)
    shaped = chart_text(text)
    # Joined letters are presentation forms, in visual (left-to-right) order.
    assert all("\ufb50" <= char <= "\ufeff" or char == " " for char in shaped)
    assert shaped.split(" ")[0] != shaped.split(" ")[-1]
    # Reordered right to left, brackets mirrored: "(ms)" still reads "(ms)".
    assert chart_text("أزمنة رد الفعل (ms)").startswith("(ms) ")
    assert chart_text("Rating") == "Rating"
    figure = Figure()
    FigureCanvasAgg(figure)
    figure.text(0.1, 0.5, shaped, family=families_for("ar"))
    figure.savefig(io.BytesIO(), format="png")  # the packaged font has every form
    monkeypatch.setattr(chart_fonts, "LAYS_OUT_TEXT", True)
    assert chart_text(text) == text


# -- the leaderboard picture -------------------------------------------------------------


def _figures(games: int) -> Figures:
    return Figures(
        games=games,
        wins=games // 2,
        snaps_won=3,
        pots_won=1,
        ties=0,
        wrong_calls=1,
        cards_won=20,
        afks=0,
        timed_calls=6,
        median_reaction_ms=310,
        best_reaction_ms=240,
        rated_games=games,
        rating=10.0 - games / 10,
        mu=25.0,
        sigma=5.0,
    )


def _leaderboard(players: int) -> LeaderboardView:
    entries = tuple(
        BoardEntry(position=index + 1, user_id=index + 1, name=name, figures=_figures(5 + index))
        for index, name in enumerate(NAMES[:players])
    )
    return LeaderboardView(
        chat_id=-1,
        is_global=False,
        ranking=Ranking.RATING,
        entries=entries,
        min_games=5,
        min_timed_calls=5,
        unlisted=0,
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_leaderboard_picture_in_every_language(language: str) -> None:
    tr = translator(language)
    view = _leaderboard(len(NAMES))
    rows = leaderboard_rows(view, tr)
    width, height = _is_png(leaderboard_picture(leaderboard_title(view, tr), rows, tr))
    assert width == 640
    assert height > 40 * len(NAMES)
    texts = _texts(leaderboard_figure(leaderboard_title(view, tr), rows, tr))
    assert chart_text(leaderboard_title(view, tr)) in texts
    for position, name, figure in rows:
        assert position in texts
        assert chart_text(drawable(name, language)) in texts
        assert chart_text(figure) in texts
    assert "$x^2$ Bob" in texts  # shown as typed, not as mathematics


class _Runtime:
    """What send_leaderboard uses: say (a text message) and upload, which sends a post."""

    def __init__(self) -> None:
        self.posts: list[Any] = []
        self.said: list[str] = []
        self.gate = IntakeGate()

    def say(self, place: Place, text: str, reply_to: int | None, keyboard: Any, **_: Any) -> None:
        self.said.append(text)

    def send(self, post: Any) -> None:
        self.posts.append(post)

    upload = Runtime.upload


async def _send(players: int, tr: gettext.NullTranslations) -> _Runtime:
    runtime = _Runtime()
    place = Place(chat_id=-1, thread_id=0)
    answer = Answerer(runtime, place, 7, tr, reply_to=5)  # type: ignore[arg-type]
    await send_leaderboard(answer, _leaderboard(players), StatsButtonSigner(b"secret"))
    return runtime


async def test_five_players_make_a_picture_with_the_text_as_caption() -> None:
    tr = translator("es")
    runtime = await _send(PICTURE_MIN_ENTRIES, tr)
    assert runtime.said == []
    (post,) = runtime.posts
    assert isinstance(post, UploadPost)
    assert post.kind == "photo"
    assert post.caption == render_leaderboard(_leaderboard(PICTURE_MIN_ENTRIES), tr)
    assert post.reply_markup is not None  # the ranking buttons stay
    _is_png(post.data)


async def test_fewer_players_get_the_text_alone() -> None:
    runtime = await _send(PICTURE_MIN_ENTRIES - 1, translator("en"))
    assert runtime.posts == []
    assert len(runtime.said) == 1
    assert runtime.said[0].startswith("🏆 <b>Leaderboard: Rating")


async def test_the_photo_posts_are_valid_bot_api_calls() -> None:
    """The picture goes out with its caption and buttons; a new picture replaces it."""
    tr = translator("en")
    view = _leaderboard(PICTURE_MIN_ENTRIES)
    keyboard = leaderboard_keyboard(view, StatsButtonSigner(b"secret"), tr)
    picture = leaderboard_picture(leaderboard_title(view, tr), leaderboard_rows(view, tr), tr)
    caption = render_leaderboard(view, tr)
    async with running_emulator() as running, Bot(running.token, base_url=running.base_url) as bot:
        user = await running.client.create_user("Ann")
        chat = await running.client.create_chat("group", title="Snap", members=[user["id"]])
        chat_id = int(chat["id"])
        photo = UploadPost("photo", chat_id, 0, picture, "leaderboard.png", caption, keyboard)
        sent = await photo.send(bot)
        assert sent.caption is not None
        assert sent.caption.startswith("🏆 Leaderboard: Rating")
        assert sent.reply_markup == keyboard
        edit = PhotoEditPost(
            chat_id, sent.message_id, picture, "leaderboard.png", caption, keyboard
        )
        await edit.send(bot)
        (message,) = await running.client.transcript(chat_id)
        assert message.kind == "photo"
        (call,) = await running.client.calls("editMessageMedia")
        assert call.status == 200
        assert await running.client.violations() == []


def test_a_picture_is_drawn_once_until_its_figures_change() -> None:
    tr = translator("es")
    counts, ratings = [(250, 2), (400, 1)], [1000.0, 1020.0]
    before = charts._stats_png.cache_info()
    first = charts.stats_chart(counts, ratings, ratings, tr)
    again = charts.stats_chart(list(counts), tuple(ratings), list(ratings), tr)
    assert again == first
    after = charts._stats_png.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    changed = charts.stats_chart([*counts, (300, 1)], ratings, ratings, tr)
    assert changed != first
    assert charts._stats_png.cache_info().misses - after.misses == 1
    # The same figures in another language are another picture.
    assert charts.stats_chart(counts, ratings, ratings, translator("th")) != first
    rows = [("1.", "Ann", "1020")]
    title = "Leaderboard"
    assert charts.leaderboard_picture(title, rows, tr) == charts.leaderboard_picture(
        title, list(rows), tr
    )
    assert charts._leaderboard_png.cache_info().hits >= 1
