"""The lobby message: who has joined, until when it stays open, and its Join, Leave, Start."""

from __future__ import annotations

import gettext
from datetime import UTC, datetime

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from ...game.engine import MAX_PLAYERS
from ...services.views import LobbyView
from .boards import name
from .callbacks import Action, CallbackSigner
from .i18n import directed, isolate

__all__ = ["clock_time", "lobby_keyboard", "render_lobby"]


def render_lobby(lobby: LobbyView, tr: gettext.NullTranslations) -> str:
    """The lobby message: who has joined, and how to start."""
    names = "\n".join(f"• {isolate(name(player), tr)}" for player in lobby.player_names)
    if lobby.status == "cancelled":
        return directed(tr.gettext("This game was called off."), tr)
    if lobby.status != "lobby":
        return directed(tr.gettext("🃏 Snap: the game has started!") + "\n" + names, tr)
    title = tr.gettext("🃏 A game of Snap is starting! Players ({count}/{max}):").format(
        count=len(lobby.players), max=MAX_PLAYERS
    )
    creator = dict(lobby.players).get(lobby.creator_id)
    if creator is None:
        hint = tr.gettext("Press Join to play. The creator (or an admin) presses Start.")
    else:  # named: the role passes on when its holder leaves, so "the creator" may mislead
        hint = tr.gettext("Press Join to play. {name} (or an admin) presses Start.").format(
            name=isolate(name(creator), tr)
        )
    if lobby.closes_at is not None and lobby.minutes_left is not None:
        hours, minutes = divmod(lobby.minutes_left, 60)
        if hours and minutes:
            left = tr.gettext("{hours} h {minutes} min").format(hours=hours, minutes=minutes)
        elif hours:
            left = tr.ngettext("{count} hour", "{count} hours", hours).format(count=hours)
        else:
            left = tr.ngettext("{count} minute", "{count} minutes", minutes).format(count=minutes)
        hint += "\n" + tr.gettext(
            "⏳ Closes in {left} (at {time} UTC); /extend keeps it open longer."
        ).format(left=left, time=clock_time(lobby.closes_at))
    return directed(f"{title}\n{names}\n\n{hint}", tr)


def clock_time(moment: str) -> str:
    """The hour and minute (UTC) of an ISO 8601 time; "?" if it does not read as one.

    >>> clock_time("2026-12-02T18:05:30+00:00"), clock_time("soon")
    ('18:05', '?')
    """
    try:
        parsed = datetime.fromisoformat(moment)
    except ValueError:
        return "?"
    return parsed.astimezone(UTC).strftime("%H:%M")


def lobby_keyboard(
    lobby: LobbyView, signer: CallbackSigner, tr: gettext.NullTranslations
) -> InlineKeyboardMarkup | None:
    """Join, Leave and Start, while the lobby is open."""
    if lobby.status != "lobby":
        return None

    def button(text: str, action: Action) -> InlineKeyboardButton:
        data = signer.encode(action, game_id=lobby.game_id, version=0)
        return InlineKeyboardButton(text, callback_data=data)

    return InlineKeyboardMarkup(
        [
            [
                button(tr.gettext("Join"), Action.JOIN),
                button(tr.gettext("Leave"), Action.LEAVE),
                button(tr.gettext("Start"), Action.START),
            ]
        ]
    )
