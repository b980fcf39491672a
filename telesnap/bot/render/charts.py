"""The pictures: the /stats chart and the leaderboard table, PNGs in the chat's language.

Drawn with matplotlib's object API on the Agg canvas (no pyplot, no global state), so they
can be drawn in worker threads. Every text goes through :mod:`.chart_fonts`.
"""

from __future__ import annotations

import functools
import gettext
import io
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from .chart_fonts import chart_text, drawable, families_for
from .i18n import is_rtl, language_of_translations, translator

__all__ = ["leaderboard_figure", "leaderboard_picture", "stats_chart", "stats_figure"]

_SIZE_INCHES = (8.0, 3.2)
_DPI = 80
_ROW_INCHES = 0.34
_TABLE_WIDTH_INCHES = 6.4


class _Writer:
    """Puts texts on a figure in one language: its fonts, its direction, nothing undrawable."""

    def __init__(self, figure: Figure, tr: gettext.NullTranslations) -> None:
        self.figure = figure
        self.language = language_of_translations(tr)
        self.rtl = is_rtl(tr)
        self.families = families_for(self.language)

    def text(self, text: str) -> str:
        """``text`` ready to hand to matplotlib."""
        return chart_text(drawable(text, self.language))

    def style(self, size: float, **extra: Any) -> dict[str, Any]:
        """The keyword arguments of a text in this language (no mathtext: names may hold $)."""
        return {"family": self.families, "fontsize": size, "parse_math": False, **extra}

    def over(self, axes: Any, text: str) -> None:
        """A title over ``axes``, from its left edge (its right edge, right to left)."""
        box = axes.get_position()
        x, align = (box.x1, "right") if self.rtl else (box.x0, "left")
        self.figure.text(x, 0.93, self.text(text), ha=align, **self.style(10))

    def title(self, x: float, y: float, text: str, size: float = 10) -> None:
        """A title whose start is at ``x`` (its right end, in a right-to-left language)."""
        x, align = (1 - x, "right") if self.rtl else (x, "left")
        self.figure.text(x, y, self.text(text), ha=align, **self.style(size))


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def stats_chart(
    reaction_counts: Sequence[tuple[int, int]],
    ratings: Sequence[float],
    chat_ratings: Sequence[float],
    tr: gettext.NullTranslations,
    *,
    ratings_from: int = 1,
    chat_rating_games: Sequence[int] = (),
) -> bytes:
    """The chart as PNG bytes: a histogram of reaction times and the rating lines.

    Cached per figures and language, so a /stats repeated before they change costs nothing.
    """
    return _stats_png(
        tuple((ms, calls) for ms, calls in reaction_counts),
        tuple(ratings),
        tuple(chat_ratings),
        language_of_translations(tr),
        ratings_from,
        tuple(chat_rating_games),
    )


PICTURES_KEPT = 64
"""How many drawn pictures of each kind are kept (a chart is some tens of kilobytes)."""


@functools.lru_cache(maxsize=PICTURES_KEPT)
def _stats_png(
    reaction_counts: tuple[tuple[int, int], ...],
    ratings: tuple[float, ...],
    chat_ratings: tuple[float, ...],
    language: str,
    ratings_from: int,
    chat_rating_games: tuple[int, ...],
) -> bytes:
    figure = stats_figure(
        reaction_counts,
        ratings,
        chat_ratings,
        translator(language),
        ratings_from=ratings_from,
        chat_rating_games=chat_rating_games,
    )
    return _png(figure)


def stats_figure(
    reaction_counts: Sequence[tuple[int, int]],
    ratings: Sequence[float],
    chat_ratings: Sequence[float],
    tr: gettext.NullTranslations,
    *,
    ratings_from: int = 1,
    chat_rating_games: Sequence[int] = (),
) -> Figure:
    """The figure :func:`stats_chart` draws.

    ``ratings``: empty where figures across chats are not shown, leaving this chat's line.
    ``ratings_from``: the rated game the all-chats line starts at (a long career shows its last
    games only); ``chat_rating_games``: the number of each game of this chat's line on the same
    axis (1, 2, … when not given).
    """
    figure = Figure(figsize=_SIZE_INCHES, dpi=_DPI)
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
    FigureCanvasAgg(figure)
    write = _Writer(figure, tr)
    reaction_axes, rating_axes = figure.subplots(1, 2)
    if write.rtl:  # the first chart goes on the right, where an Arabic reader starts
        reaction_axes, rating_axes = rating_axes, reaction_axes
    write.over(reaction_axes, tr.gettext("Reaction times (ms)"))
    write.over(rating_axes, tr.gettext("Rating after each rated game"))
    calls = sum(count for _, count in reaction_counts)
    if calls:
        reaction_axes.hist(
            [ms for ms, _ in reaction_counts],
            weights=[count for _, count in reaction_counts],
            bins=min(20, max(5, calls // 3)),
            histtype="stepfilled",
        )
        reaction_axes.set_ylabel(write.text(tr.gettext("calls")), **write.style(8))
    else:
        reaction_axes.text(
            0.5,
            0.5,
            write.text(tr.gettext("no timed calls yet")),
            ha="center",
            va="center",
            transform=reaction_axes.transAxes,
            **write.style(10),
        )
        reaction_axes.set_xticks([])
        reaction_axes.set_yticks([])
    games_here = list(chat_rating_games) or list(range(1, len(chat_ratings) + 1))
    games = list(range(ratings_from, ratings_from + len(ratings)))
    if not ratings:  # no figures across chats shown here (or none yet)
        lines = [(games_here, chat_ratings, tr.gettext("this chat"))]
    elif chat_ratings == ratings and games_here == games:
        lines = [(games, ratings, tr.gettext("this chat and all chats"))]
    else:
        lines = [
            (games, ratings, tr.gettext("all chats")),
            (games_here, chat_ratings, tr.gettext("this chat")),
        ]
    for numbers, values, label in lines:
        if values:
            rating_axes.plot(
                numbers,
                list(values),
                marker="o" if len(values) < 2 else None,  # a lone point draws no line
                label=write.text(label),
            )
    if ratings or chat_ratings:
        rating_axes.legend(prop={"family": write.families, "size": 8})
        rating_axes.set_xlabel(write.text(tr.gettext("rated games")), **write.style(8))
    for axes in (reaction_axes, rating_axes) if calls else (rating_axes,):
        axes.tick_params(labelsize=8)
        # Games, calls, milliseconds and rating points are all whole numbers.
        axes.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        axes.yaxis.set_major_locator(MaxNLocator(4, integer=True))
    return figure


def leaderboard_picture(
    title: str, rows: Sequence[tuple[str, str, str]], tr: gettext.NullTranslations
) -> bytes:
    """A small table image as PNG bytes: a title, then one row per player (drawn once)."""
    return _leaderboard_png(title, tuple(rows), language_of_translations(tr))


@functools.lru_cache(maxsize=PICTURES_KEPT)
def _leaderboard_png(title: str, rows: tuple[tuple[str, str, str], ...], language: str) -> bytes:
    return _png(leaderboard_figure(title, rows, translator(language)))


def leaderboard_figure(
    title: str, rows: Sequence[tuple[str, str, str]], tr: gettext.NullTranslations
) -> Figure:
    """The figure :func:`leaderboard_picture` draws: the title, then position, name, figure."""
    height = _ROW_INCHES * (len(rows) + 1.6)
    figure = Figure(figsize=(_TABLE_WIDTH_INCHES, height), dpi=100)
    FigureCanvasAgg(figure)
    write = _Writer(figure, tr)
    row_height = _ROW_INCHES / height
    write.title(0.03, 1 - 0.8 * row_height, title, size=12)

    def x(fraction: float) -> float:
        return 1 - fraction if write.rtl else fraction

    align = "right" if write.rtl else "left"
    for index, (position, name, figure_text) in enumerate(rows):
        bottom = 1 - (index + 2.3) * row_height
        if index % 2 == 0:
            figure.patches.append(
                Rectangle(
                    (0.01, bottom),
                    0.98,
                    row_height,
                    transform=figure.transFigure,
                    facecolor="#eef1f6",
                    edgecolor="none",
                    figure=figure,
                )
            )
        middle = bottom + row_height / 2
        # One weight throughout: the packaged fonts are variable fonts matplotlib draws at 400.
        cells = ((0.03, position, "#555555"), (0.1, name, "black"), (0.5, figure_text, "#333333"))
        for at, text, colour in cells:
            figure.text(
                x(at),
                middle,
                write.text(text),
                ha=align,
                va="center",
                **write.style(10, color=colour),
            )
    return figure
