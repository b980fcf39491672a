"""``/history``: a chat's ended games, a page at a time, each in two lines."""

from __future__ import annotations

import gettext
from collections.abc import Callable

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from ...services.stats.views import GameLine, HistoryPage
from .boards import MAX_TEXT, NAME_CUTS, name, shown_length
from .i18n import directed, isolate, listed
from .stats import StatsButton, StatsButtonSigner, games_count

__all__ = ["game_length", "history_keyboard", "render_game_line", "render_history"]


def game_length(seconds: int) -> str:
    """A game's length as a clock shows it: ``m:ss``, or ``h:mm:ss`` from an hour.

    >>> game_length(75), game_length(3 * 3600 + 31 * 60)
    ('1:15', '3:31:00')
    """
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def render_game_line(
    game: GameLine, tr: gettext.NullTranslations, cut: Callable[[str], str] = NAME_CUTS[0]
) -> str:
    """Two lines about one ended game: when, how long, flips; who played and who won (``cut``)."""
    when = game.ended_at.strftime("%Y-%m-%d %H:%M UTC") if game.ended_at else "?"
    length = "?" if game.length_s is None else game_length(game.length_s)
    head = tr.ngettext(
        "#{id} · {when} · {length} · {flips} flip",
        "#{id} · {when} · {length} · {flips} flips",
        game.flips,
    ).format(id=game.game_id, when=when, length=length, flips=game.flips)
    players = listed((isolate(name(cut(player)), tr) for player in game.players), tr)
    if game.winners:
        names = listed((f"<b>{isolate(name(cut(w)), tr)}</b>" for w in game.winners), tr)
        if game.rated:
            outcome = tr.gettext("🏆 {names}").format(names=names)
        else:  # no win counted, as /stats shows
            outcome = tr.gettext("🏆 {names} (unrated: only one player stayed)").format(names=names)
    else:
        outcome = tr.gettext("🛑 stopped: nobody won")  # only a stopped game has no winner
    return f"{head}\n{players} — {outcome}"


def render_history(page: HistoryPage, tr: gettext.NullTranslations) -> str:
    """A page of the chat's past games, its names cut where whole they would not fit a message."""
    if not page.total:
        return tr.gettext("📜 No game has ended in this chat yet.")
    title = tr.gettext("📜 <b>Games played here</b> · page {page} of {pages} ({games})").format(
        page=page.page + 1, pages=page.pages, games=games_count(page.total, tr)
    )
    hint = tr.gettext("<i>/replay ID sends a game's whole history.</i>")
    for cut in NAME_CUTS:
        lines = [title, *(render_game_line(game, tr, cut) for game in page.games), hint]
        text = "\n\n".join(lines)
        if shown_length(directed(text, tr)) <= MAX_TEXT:  # as it is sent
            break
    return text


def history_keyboard(
    page: HistoryPage, signer: StatsButtonSigner, tr: gettext.NullTranslations
) -> InlineKeyboardMarkup | None:
    """« Newer and Older » buttons, where there is a page to go to."""
    buttons = []
    if page.page > 0:
        data = signer.encode(StatsButton("H", "p", page.page - 1))
        buttons.append(InlineKeyboardButton(tr.gettext("« Newer"), callback_data=data))
    if page.page + 1 < page.pages:
        data = signer.encode(StatsButton("H", "p", page.page + 1))
        buttons.append(InlineKeyboardButton(tr.gettext("Older »"), callback_data=data))
    return InlineKeyboardMarkup([buttons]) if buttons else None
