"""How each notice reads: one renderer per notice kind, in the chat's language.

A notice is stored as data and rendered when sent, so a row written before a restart (or by
another worker) reads in the chat's language of the moment. A kind with no renderer (a newer
version's row) raises :class:`UnknownNoticeError`: its row is set aside, never holding up
the chat.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from ...services.outbox.rows import Notice, NoticeKind
from ...services.settings import GameSettings
from .boards import name
from .i18n import isolate
from .settings_menu import settings_text

Renderer = Callable[[Mapping[str, Any], gettext.NullTranslations], str]
"""Renders a notice's arguments in a language."""


class UnknownNoticeError(LookupError):
    """A notice of a kind this version cannot render."""


def mention(user_id: int, display_name: str) -> str:
    """An HTML mention that notifies the user."""
    return f'<a href="tg://user?id={int(user_id)}">{name(display_name)}</a>'


def _bold_name(args: Mapping[str, Any], tr: gettext.NullTranslations) -> str:
    return f"<b>{isolate(name(str(args['name'])), tr)}</b>"


def _reminder(args: Mapping[str, Any], tr: gettext.NullTranslations) -> str:
    player = isolate(mention(int(args["user_id"]), str(args["name"])), tr)
    return tr.gettext("⏰ {player}, it is your turn: press Flip!").format(player=player)


def _settings_saved(args: Mapping[str, Any], tr: gettext.NullTranslations) -> str:
    settings = GameSettings.from_values(dict(args["settings"]))
    private = bool(args.get("private"))  # a private chat's show only its language
    return tr.gettext("Saved.") + "\n\n" + settings_text(settings, tr, private=private)


def _lobby_opened(args: Mapping[str, Any], tr: gettext.NullTranslations) -> str:
    chat = f"<b>{isolate(name(str(args.get('chat') or '?')), tr)}</b>"
    opened = tr.gettext("🃏 {name} opened a game of Snap in {chat}.").format(
        name=_bold_name(args, tr), chat=chat
    )
    link = args.get("link")
    go = tr.gettext("Go to the lobby")
    join = (
        f'<a href="{escape(str(link), quote=True)}">{go}</a>'
        if link
        else tr.gettext("Open the chat to join it.")
    )
    stop = tr.gettext("Send /notify off in that chat to stop these messages.")
    return f"{opened}\n{join}\n\n{stop}"


_RENDERERS: dict[str, Renderer] = {
    NoticeKind.TURN_REMINDER: _reminder,
    NoticeKind.LOBBY_EXPIRED: lambda _args, tr: tr.gettext(
        "⌛ Nobody started the game, so the lobby is closed."
    ),
    NoticeKind.CALLED_OFF: lambda _args, tr: tr.gettext("The game was called off."),
    NoticeKind.SETTINGS_SAVED: _settings_saved,
    NoticeKind.AUTO_FLIPPED: lambda args, tr: tr.gettext(
        "⏰ {name} was away, so I flipped for them."
    ).format(name=_bold_name(args, tr)),
    NoticeKind.SKIPPED: lambda args, tr: tr.gettext(
        "⏰ {name} was away, so their turn is skipped."
    ).format(name=_bold_name(args, tr)),
    NoticeKind.IDLE_ABANDONED: lambda _args, tr: tr.gettext(
        "💤 Nobody has played for a long time: the game is abandoned."
    ),
    NoticeKind.TIME_UP: lambda _args, tr: tr.gettext("⏱ Time is up!"),
    NoticeKind.STOPPED: lambda args, tr: tr.gettext(
        "🛑 {name} stopped the game with /endgame."
    ).format(name=_bold_name(args, tr)),
    NoticeKind.RESUMED: lambda _args, tr: tr.gettext("♻️ I am back: the game goes on."),
    NoticeKind.LOBBY_OPENED: _lobby_opened,
}


def render_notice(notice: Notice, tr: gettext.NullTranslations) -> str:
    """The text of ``notice`` in ``tr``'s language (HTML).

    Raises :class:`UnknownNoticeError` for a kind with no renderer, or unreadable arguments.

    >>> render_notice(Notice("time_up"), gettext.NullTranslations())
    '⏱ Time is up!'
    """
    renderer = _RENDERERS.get(notice.kind)
    if renderer is None:
        raise UnknownNoticeError(f"no renderer for notice kind {notice.kind!r}")
    try:
        return renderer(notice.args, tr)
    except (KeyError, TypeError, ValueError) as error:
        raise UnknownNoticeError(f"notice {notice.kind!r} has bad arguments: {error!r}") from error
