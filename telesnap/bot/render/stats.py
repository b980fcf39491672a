"""The stats messages: /stats figures, leaderboards, and the buttons of both and of /history.

The buttons' data matches the anchored :data:`STATS_CALLBACK_PATTERN`, which never overlaps
the game buttons' pattern, and is signed for its chat (:meth:`StatsButtonSigner.in_chat`),
so a button's data pressed in another chat is not authentic.

>>> signer = StatsButtonSigner(b"secret").in_chat(-100)
>>> data = signer.encode(StatsButton("B", "wg", 0))
>>> signer.decode(data)
StatsButton(kind='B', arg='wg', page=0)
>>> signer.decode(data.replace("wg", "rg")) is None
True
>>> StatsButtonSigner(b"secret").in_chat(-200).decode(data) is None
True
"""

from __future__ import annotations

import gettext
import re
from dataclasses import dataclass
from html import escape

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from ...services.privacy import FORMER_PLAYER
from ...services.stats.views import (
    Figures,
    LeaderboardView,
    PlayerStatsView,
    Ranking,
)
from .boards import milliseconds, name
from .callbacks import Signer
from .i18n import isolate, listed
from .names import shorten

__all__ = [
    "STATS_CALLBACK_PATTERN",
    "StatsButton",
    "StatsButtonSigner",
    "games_count",
    "leaderboard_keyboard",
    "leaderboard_rows",
    "leaderboard_title",
    "rating_rule",
    "render_leaderboard",
    "render_player_stats",
    "wants_picture",
]

STATS_CALLBACK_PATTERN = r"^T[BH]:[a-z]{1,2}:\d{1,6}:[A-Za-z0-9_-]{11}$"
_PATTERN = re.compile(STATS_CALLBACK_PATTERN)
RANKING_CODES = {
    Ranking.RATING: "r",
    Ranking.WINS: "w",
    Ranking.FASTEST: "f",
    Ranking.SNAPS: "s",
}


@dataclass(frozen=True, slots=True)
class StatsButton:
    """A stats button: a leaderboard (``B``, arg = ranking and scope) or a history page."""

    kind: str
    arg: str
    page: int

    @staticmethod
    def board(ranking: Ranking, is_global: bool) -> StatsButton:
        """The button that shows a leaderboard."""
        return StatsButton("B", RANKING_CODES[ranking] + ("g" if is_global else "c"), 0)

    def ranking(self) -> tuple[Ranking, bool] | None:
        """The leaderboard a ``B`` button shows: its ranking and whether it is global."""
        codes = {code: ranking for ranking, code in RANKING_CODES.items()}
        if self.kind != "B" or len(self.arg) != 2 or self.arg[0] not in codes:
            return None
        return (codes[self.arg[0]], self.arg[1] == "g") if self.arg[1] in "cg" else None


class StatsButtonSigner(Signer):
    """Signs and checks the stats buttons' callback data."""

    PURPOSE = b"telesnap-stats-callback"

    def __init__(self, secret: bytes, chat_id: int | None = None) -> None:
        super().__init__(secret)
        self._chat_id = chat_id

    def in_chat(self, chat_id: int) -> StatsButtonSigner:
        """The signer of the buttons sent to (and pressed in) one chat."""
        return StatsButtonSigner(self._secret, chat_id)

    def encode(self, button: StatsButton) -> str:
        """The callback data of a button (at most 30 bytes)."""
        return self.signed(f"T{button.kind}:{button.arg}:{button.page}", self._chat_id)

    def decode(self, data: str | None) -> StatsButton | None:
        """The button a callback data stands for, or None if it is forged or not ours."""
        if data is None or _PATTERN.fullmatch(data) is None:
            return None
        body = self.authentic_body(data, self._chat_id)
        if body is None:
            return None
        kind_part, arg, page = body.split(":")
        return StatsButton(kind_part[1], arg, int(page))


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def games_count(count: int, tr: gettext.NullTranslations) -> str:
    """``N games``, in the plural form of the language."""
    return tr.ngettext("{count} game", "{count} games", count).format(count=count)


def _wins(count: int, tr: gettext.NullTranslations) -> str:
    return tr.ngettext("{count} win", "{count} wins", count).format(count=count)


def _snaps_won(figures: Figures, tr: gettext.NullTranslations) -> tuple[str, str]:
    return (
        tr.ngettext("{count} snap won", "{count} snaps won", figures.snaps_won).format(
            count=figures.snaps_won
        ),
        tr.ngettext("{count} Snap Pot won", "{count} Snap Pots won", figures.pots_won).format(
            count=figures.pots_won
        ),
    )


def _rating(figures: Figures) -> str:
    return str(round(figures.rating))


def rating_rule(tr: gettext.NullTranslations) -> str:
    """The one line that says what the rating is."""
    return tr.gettext(
        "Ratings start at 1000; a win raises yours and a loss lowers it, by less as you play more."
    )


def _figures_lines(
    title: str, figures: Figures, tr: gettext.NullTranslations, everywhere: Figures | None = None
) -> list[str]:
    """``everywhere``: the all-chats figures of the same games, whose rating may differ."""
    snaps, pots = _snaps_won(figures, tr)
    rating = _rating(figures)
    if everywhere is not None and _rating(everywhere) != rating:
        # Reckoned against the opponents' ratings in all chats, the same games rate differently.
        rating = tr.gettext("{rating} ({everywhere} in all chats)").format(
            rating=rating, everywhere=_rating(everywhere)
        )
    lines = [
        tr.gettext("<b>{title}</b>: {games} · {wins} ({rate}) · rating {rating}").format(
            title=title,
            games=games_count(figures.games, tr),
            wins=_wins(figures.wins, tr),
            rate=_percent(figures.win_rate),
            rating=rating,
        ),
        " · ".join(
            [
                snaps,
                pots,
                tr.ngettext("{count} tie", "{count} ties", figures.ties).format(count=figures.ties),
                tr.ngettext(
                    "{count} wrong call", "{count} wrong calls", figures.wrong_calls
                ).format(count=figures.wrong_calls),
            ]
        ),
    ]
    if figures.median_reaction_ms is None or figures.best_reaction_ms is None:
        reaction = tr.gettext("no timed calls")
    else:
        reaction = tr.gettext("reaction: median {median}, best {best}").format(
            median=milliseconds(figures.median_reaction_ms, tr),
            best=milliseconds(figures.best_reaction_ms, tr),
        )
    cards = tr.ngettext("{count} card won", "{count} cards won", figures.cards_won).format(
        count=figures.cards_won
    )
    afks = tr.ngettext("{count} time away (AFK)", "{count} times away (AFK)", figures.afks).format(
        count=figures.afks
    )
    lines.append(" · ".join([cards, reaction, afks]))
    return lines


def render_player_stats(
    view: PlayerStatsView, tr: gettext.NullTranslations, *, private: bool = False
) -> str:
    """A player's figures in this chat and in all chats (short enough for a caption).

    ``private``: asked in a private chat, where no game is played: only the figures of all chats.
    """
    lines = [tr.gettext("📊 Stats of <b>{name}</b>").format(name=isolate(name(view.name), tr))]
    here, everywhere = view.chat, view.everywhere
    if (
        here is not None
        and here.games
        and everywhere is not None
        and here.games == everywhere.games
    ):
        # Every game was played here: the figures are the same, only the rating can differ.
        lines += _figures_lines(tr.gettext("This chat and all chats"), here, tr, everywhere)
    else:
        if here is not None and here.games:
            lines += _figures_lines(tr.gettext("This chat"), here, tr)
        elif private and not (everywhere is not None and everywhere.games):
            lines.append(tr.gettext("No finished games yet: Snap is played in groups."))
        elif not private and here is not None:  # figures of games others walked out of only
            lines.append(
                tr.gettext("No game counts here yet: one the others walked out of does not count.")
            )
        elif view.name == FORMER_PLAYER:  # their figures went with their data
            lines.append(tr.gettext("This player erased their data: no figures are kept."))
        elif not private:
            lines.append(tr.gettext("No finished games in this chat yet."))
        if everywhere is not None and everywhere.games:
            lines += _figures_lines(tr.gettext("All chats"), everywhere, tr)
    if any(figures is not None and figures.games for figures in (here, everywhere)):
        lines.append(f"<i>{rating_rule(tr)}</i>")
    return "\n".join(lines)


def _board_value(view: LeaderboardView, figures: Figures, tr: gettext.NullTranslations) -> str:
    if view.ranking is Ranking.RATING:
        return tr.gettext("{rating} ({games})").format(
            rating=_rating(figures),
            games=tr.ngettext(
                "{count} rated game", "{count} rated games", figures.rated_games
            ).format(count=figures.rated_games),
        )
    if view.ranking is Ranking.WINS:
        return tr.gettext("{wins} in {games}").format(
            wins=_wins(figures.wins, tr), games=games_count(figures.games, tr)
        )
    if view.ranking is Ranking.FASTEST:
        return tr.gettext("median {median} over {calls}").format(
            median=milliseconds(figures.median_reaction_ms or 0, tr),
            calls=tr.ngettext("{count} call", "{count} calls", figures.timed_calls).format(
                count=figures.timed_calls
            ),
        )
    return listed(_snaps_won(figures, tr), tr)


def _ranking_label(ranking: Ranking, tr: gettext.NullTranslations) -> str:
    return {
        Ranking.RATING: tr.gettext("Rating"),
        Ranking.WINS: tr.gettext("Wins"),
        Ranking.FASTEST: tr.gettext("Fastest"),
        Ranking.SNAPS: tr.gettext("Snaps"),
    }[ranking]


PICTURE_MIN_ENTRIES = 5
"""A leaderboard listing at least this many players is also sent as a table picture."""
PICTURE_NAME_LIMIT = 28
"""The leaderboard picture cuts names past this many characters (the caption has them whole)."""


def leaderboard_title(view: LeaderboardView, tr: gettext.NullTranslations) -> str:
    """The leaderboard's title as plain text: its ranking and scope."""
    scope = tr.gettext("all chats") if view.is_global else tr.gettext("this chat")
    if view.provisional:
        title = tr.gettext("Provisional leaderboard: {ranking} · {scope}")
    else:
        title = tr.gettext("Leaderboard: {ranking} · {scope}")
    return title.format(ranking=_ranking_label(view.ranking, tr), scope=scope)


def leaderboard_rows(
    view: LeaderboardView, tr: gettext.NullTranslations
) -> list[tuple[str, str, str]]:
    """The rows of the leaderboard picture: position, name (cut if long), figure.

    Below them, how many more players are ranked, where the board lists only its first few.
    """
    rows = [
        (
            f"{entry.position}.",
            shorten(entry.name, PICTURE_NAME_LIMIT),
            _board_value(view, entry.figures, tr),
        )
        for entry in view.entries
    ]
    if view.more:
        rows.append(("", ranked_below(view.more, tr), ""))
    return rows


def wants_picture(view: LeaderboardView) -> bool:
    """Whether the leaderboard is long enough to be sent as a picture too."""
    return len(view.entries) >= PICTURE_MIN_ENTRIES


def render_leaderboard(view: LeaderboardView, tr: gettext.NullTranslations) -> str:
    """A leaderboard: one line per listed player, and who can be listed."""
    lines = [f"🏆 <b>{escape(leaderboard_title(view, tr), quote=False)}</b>"]
    for entry in view.entries:
        value = _board_value(view, entry.figures, tr)
        lines.append(f"{entry.position}. <b>{isolate(name(entry.name), tr)}</b> — {value}")
    if view.more:
        lines.append(f"<i>{ranked_below(view.more, tr)}</i>")
    if not view.entries:
        lines.append(tr.gettext("Nobody is listed yet."))
    lines.append(f"<i>{_listing_rule(view, tr)}</i>")
    if view.ranking is Ranking.RATING and view.entries:
        lines.append(f"<i>{rating_rule(tr)}</i>")
    return "\n".join(lines)


def ranked_below(count: int, tr: gettext.NullTranslations) -> str:
    """The line under a board's rows: how many players are ranked below them, not shown."""
    return tr.ngettext("…and {count} more player", "…and {count} more players", count).format(
        count=count
    )


def _listing_rule(view: LeaderboardView, tr: gettext.NullTranslations) -> str:
    """Who is listed: after how many games (or calls), and who is not yet."""
    if view.provisional:
        if view.ranking is Ranking.FASTEST:
            return tr.ngettext(
                "Provisional: nobody has {count} timed correct call yet.",
                "Provisional: nobody has {count} timed correct calls yet.",
                view.min_timed_calls,
            ).format(count=view.min_timed_calls)
        return tr.ngettext(
            "Provisional: nobody has {count} rated game yet.",
            "Provisional: nobody has {count} rated games yet.",
            view.min_games,
        ).format(count=view.min_games)
    if view.ranking is Ranking.FASTEST:
        rule = tr.ngettext(
            "Listed after {count} timed correct call.",
            "Listed after {count} timed correct calls.",
            view.min_timed_calls,
        ).format(count=view.min_timed_calls)
    else:
        rule = tr.ngettext(
            "Listed after {count} rated game.",
            "Listed after {count} rated games.",
            view.min_games,
        ).format(count=view.min_games)
    if view.unlisted:
        rule += " " + tr.ngettext(
            "{count} more player is not listed yet.",
            "{count} more players are not listed yet.",
            view.unlisted,
        ).format(count=view.unlisted)
    return rule


def leaderboard_keyboard(
    view: LeaderboardView, signer: StatsButtonSigner, tr: gettext.NullTranslations
) -> InlineKeyboardMarkup:
    """Buttons: the four rankings, then this chat or all chats."""

    def button(label: str, ranking: Ranking, is_global: bool) -> InlineKeyboardButton:
        current = ranking is view.ranking and is_global == view.is_global
        text = f"• {label} •" if current else label
        return InlineKeyboardButton(
            text, callback_data=signer.encode(StatsButton.board(ranking, is_global))
        )

    rankings = [button(_ranking_label(r, tr), r, view.is_global) for r in RANKING_CODES]
    if not view.shared:  # the chat keeps its people to itself: no board across chats
        return InlineKeyboardMarkup([rankings])
    scopes = [
        button(tr.gettext("This chat"), view.ranking, False),
        button(tr.gettext("All chats"), view.ranking, True),
    ]
    return InlineKeyboardMarkup([rankings, scopes])
