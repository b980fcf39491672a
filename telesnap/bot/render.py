"""Turning tables, lobbies and operations into HTML messages and keyboards.

The table format is fixed so players (and tests) can read it: one line per
player with their name, face-up top card (``—`` when none), ``N face-down``
and ``M face-up`` (or ``out``), then ``Snap Pot: 7♣ (K cards)`` while there
is a pot, then whose turn it is.

In a translated language names and cards are isolated (Unicode FSI ... PDI),
and in a right-to-left language (Arabic) every line is marked right-to-left and
the turn marker points left, so a Latin name or ``10♥`` stays readable inside
an Arabic line. English is left exactly as above.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable, Sequence
from html import escape

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from ..game import (
    CallKind,
    CallVerdict,
    CardFlipped,
    EndReason,
    GameEnded,
    GameStarted,
    LeaveReason,
    Operation,
    PenaltyPaid,
    PlayerLeft,
    PlayerOut,
    RaceResolved,
    SeatStatus,
    SnapCalled,
)
from ..game.engine import MAX_PLAYERS
from ..services.views import LobbyView, TableView
from .callbacks import Action, CallbackSigner
from .i18n import directed, is_rtl, isolate

MAX_TEXT = 4096
_Who = Callable[[int], str]
EMPTY_PILE = "—"


def name(text: str) -> str:
    """A user-supplied name, escaped for HTML."""
    return escape(text, quote=False)


def _person(text: str, tr: gettext.NullTranslations) -> str:
    """A user's name, escaped, and isolated inside a translated line."""
    return isolate(name(text), tr)


def render_table(table: TableView, tr: gettext.NullTranslations) -> str:
    """The table: one line per player, the pot, and whose turn it is."""
    lines = []
    turn_marker = "◀ " if is_rtl(tr) else "▶ "
    for player in table.players:
        marker = turn_marker if player.is_turn else ""
        if player.status is SeatStatus.ACTIVE:
            top = isolate(str(player.top), tr) if player.top else EMPTY_PILE
            counts = tr.gettext("{down} face-down · {up} face-up").format(
                down=player.face_down, up=player.face_up
            )
            lines.append(f"{marker}<b>{_person(player.name, tr)}</b>: {top} · {counts}")
        else:
            status = tr.gettext("out") if player.status is SeatStatus.OUT else tr.gettext("left")
            lines.append(f"<s>{_person(player.name, tr)}</s>: {status}")
    if table.pot_top is not None:
        lines.append(
            tr.ngettext(
                "Snap Pot: {card} ({count} card)",
                "Snap Pot: {card} ({count} cards)",
                table.pot_size,
            ).format(card=isolate(str(table.pot_top), tr), count=table.pot_size)
        )
    turn = table.turn_player
    if turn is not None:
        lines.append(tr.gettext("Turn: {name}").format(name=f"<b>{_person(turn.name, tr)}</b>"))
    return directed("\n".join(lines), tr)


def describe(op: Operation, table: TableView, tr: gettext.NullTranslations) -> str | None:
    """One line saying what an operation did, or None for operations players need not see."""

    def who(seat: int) -> str:
        return f"<b>{_person(table.name_of_seat(seat), tr)}</b>"

    def card(op: CardFlipped) -> str:
        return isolate(str(op.card), tr)

    if isinstance(op, GameStarted):
        first = (op.dealer + 1) % op.player_count
        return tr.gettext("🃏 {dealer} deals {count} cards; {first} flips first.").format(
            dealer=who(op.dealer), count=len(op.deck), first=who(first)
        )
    if isinstance(op, CardFlipped):
        if op.turned_over:
            return tr.gettext("{name} turns their pile over and flips {card}").format(
                name=who(op.seat), card=card(op)
            )
        return tr.gettext("{name} flips {card}").format(name=who(op.seat), card=card(op))
    if isinstance(op, SnapCalled):
        if op.verdict is CallVerdict.WRONG:
            return tr.gettext("❌ {name} called, but nothing matches.").format(name=who(op.seat))
        return None
    if isinstance(op, RaceResolved):
        return _describe_race(op, who, tr)
    if isinstance(op, PenaltyPaid):
        return tr.gettext("{name} gives a card to {receiver}.").format(
            name=who(op.seat), receiver=who(op.receiver)
        )
    if isinstance(op, PlayerOut):
        return tr.gettext("💨 {name} has no cards left and is out.").format(name=who(op.seat))
    if isinstance(op, PlayerLeft):
        texts = {
            LeaveReason.LEFT: tr.gettext("🚪 {name} left the game; their cards are shared out."),
            LeaveReason.REMOVED: tr.gettext("🚪 {name} was removed; their cards are shared out."),
            LeaveReason.AFK: tr.gettext("💤 {name} was away too long and is removed."),
        }
        return texts[op.leave_reason].format(name=who(op.seat))
    if isinstance(op, GameEnded):
        return _describe_end(op, who, tr)
    return None


def _describe_race(op: RaceResolved, who: _Who, tr: gettext.NullTranslations) -> str:
    if len(op.winners) > 1:
        names = ", ".join(who(seat) for seat in op.winners)
        return tr.gettext("🤝 {names} called together: the piles go into the Snap Pot.").format(
            names=names
        )
    if op.call is CallKind.SNAP_POT:
        text = tr.ngettext(
            "⚡ {name} wins the Snap Pot and takes {count} card!",
            "⚡ {name} wins the Snap Pot and takes {count} cards!",
            op.cards,
        )
    else:
        text = tr.ngettext(
            "⚡ {name} wins the Snap and takes {count} card!",
            "⚡ {name} wins the Snap and takes {count} cards!",
            op.cards,
        )
    return text.format(name=who(op.winners[0]), count=op.cards)


def _describe_end(op: GameEnded, who: _Who, tr: gettext.NullTranslations) -> str:
    if op.reason is EndReason.ABANDONED:
        return tr.gettext("🛑 The game was stopped. Nobody wins.")
    if len(op.winners) == 1:
        return tr.gettext("🏆 {name} wins the game!").format(name=who(op.winners[0]))
    names = ", ".join(who(seat) for seat in op.winners)
    return tr.gettext("🏆 {names} share the win: each wins the game!").format(names=names)


def compose_board(events: Sequence[str], table: TableView, tr: gettext.NullTranslations) -> str:
    """A board message: what happened since the last one, then the table.

    When too much happened to fit one message, the oldest lines are summarised.
    """
    board = render_table(table, tr)
    kept = list(events)
    while kept and len(directed("\n".join(kept), tr)) + len(board) + 64 > MAX_TEXT:
        kept.pop(0)
    dropped = len(events) - len(kept)
    header = (
        [
            tr.ngettext(
                "…and {count} earlier event", "…and {count} earlier events", dropped
            ).format(count=dropped)
        ]
        if dropped
        else []
    )
    return directed("\n".join([*header, *kept, "", board]).strip(), tr)


def board_keyboard(
    table: TableView, signer: CallbackSigner, tr: gettext.NullTranslations
) -> InlineKeyboardMarkup | None:
    """Flip and Snap! (and Snap Pot! while there is a pot); none once the game is over."""
    if table.is_over:
        return None

    def button(text: str, action: Action) -> InlineKeyboardButton:
        data = signer.encode(action, game_id=table.game_id, version=table.board_version)
        return InlineKeyboardButton(text, callback_data=data)

    row = [button(tr.gettext("Flip"), Action.FLIP), button(tr.gettext("Snap!"), Action.SNAP)]
    if table.pot_size:
        row.append(button(tr.gettext("Snap Pot!"), Action.SNAP_POT))
    return InlineKeyboardMarkup([row])


def render_lobby(lobby: LobbyView, tr: gettext.NullTranslations) -> str:
    """The lobby message: who has joined, and how to start."""
    names = "\n".join(f"• {_person(player, tr)}" for player in lobby.player_names)
    if lobby.status == "cancelled":
        return tr.gettext("This game was called off.")
    if lobby.status != "lobby":
        return directed(tr.gettext("🃏 Snap: the game has started!") + "\n" + names, tr)
    title = tr.gettext("🃏 A game of Snap is starting! Players ({count}/{max}):").format(
        count=len(lobby.players), max=MAX_PLAYERS
    )
    hint = tr.gettext("Press Join to play. The creator (or an admin) presses Start.")
    return directed(f"{title}\n{names}\n\n{hint}", tr)


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
