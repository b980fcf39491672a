"""The /stats picture: a PNG of a player's reaction times and rating over time.

Drawn with matplotlib's object API on the Agg canvas (headless, no pyplot and
no global state), so charts can be drawn in worker threads.
"""

from __future__ import annotations

import gettext
import io
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .i18n import DEFAULT_LANGUAGE, language_of_translations, translator

__all__ = ["stats_chart"]

_SCRIPTS_WITHOUT_LAYOUT = ("ar", "th")
_SIZE_INCHES = (8.0, 3.2)
_DPI = 80


def stats_chart(
    reaction_counts: Sequence[tuple[int, int]],
    ratings: Sequence[float],
    chat_ratings: Sequence[float],
    tr: gettext.NullTranslations,
    *,
    ratings_from: int = 1,
    chat_ratings_from: int = 1,
) -> bytes:
    """The chart as PNG bytes: a histogram of reaction times and the rating lines.

    ``reaction_counts`` holds ``(reaction_ms, calls)`` pairs, as the stats keep them;
    ``ratings_from`` and ``chat_ratings_from`` number the rated games the rating lines
    start at (a long career shows its last games only).

    matplotlib's bundled font has no Thai letters and does not join or reorder
    Arabic, so charts for those languages are labelled in English (the caption
    sent with the picture is still in the chat's language).
    """
    if language_of_translations(tr) in _SCRIPTS_WITHOUT_LAYOUT:
        tr = translator(DEFAULT_LANGUAGE)
    figure = Figure(figsize=_SIZE_INCHES, dpi=_DPI)
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
    FigureCanvasAgg(figure)
    reaction_axes, rating_axes = figure.subplots(1, 2)
    figure.text(0.08, 0.93, tr.gettext("Reaction times (ms)"), fontsize=10)
    calls = sum(count for _, count in reaction_counts)
    if calls:
        reaction_axes.hist(
            [ms for ms, _ in reaction_counts],
            weights=[count for _, count in reaction_counts],
            bins=min(20, max(5, calls // 3)),
            histtype="stepfilled",
        )
        reaction_axes.set_ylabel(tr.gettext("calls"), fontsize=8)
    else:
        reaction_axes.text(0.5, 0.5, tr.gettext("no timed calls yet"), ha="center", va="center")
        reaction_axes.set_xticks([])
        reaction_axes.set_yticks([])
    figure.text(0.56, 0.93, tr.gettext("Rating after each rated game"), fontsize=10)
    if ratings:
        rating_axes.plot(
            range(ratings_from, ratings_from + len(ratings)),
            list(ratings),
            label=tr.gettext("all chats"),
        )
    if chat_ratings:
        rating_axes.plot(
            range(chat_ratings_from, chat_ratings_from + len(chat_ratings)),
            list(chat_ratings),
            label=tr.gettext("this chat"),
        )
    if ratings or chat_ratings:
        rating_axes.legend(fontsize=8)
        rating_axes.set_xlabel(tr.gettext("rated games"), fontsize=8)
    for axes in (reaction_axes, rating_axes):
        axes.tick_params(labelsize=8)
        axes.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        axes.yaxis.set_major_locator(MaxNLocator(4))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
