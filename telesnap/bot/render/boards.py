"""Turning tables, lobbies and operations into HTML messages and keyboards.

The table format is fixed so players (and tests) can read it. Boards cut long names (the
lobby shows them whole, and so do the final standings where they fit). Lengths are measured
as Telegram measures them (:func:`shown_length`). Names and cards whose direction differs
from the line's are isolated (:func:`~.i18n.isolate`), and in a right-to-left language
every line is marked right-to-left.
"""

from __future__ import annotations

import gettext
import re
from collections.abc import Callable, Sequence
from html import escape, unescape

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from ...game import (
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
from ...services.stats.standings import FinalView, StandingRow
from ...services.views import TableView
from .callbacks import Action, CallbackSigner
from .i18n import directed, is_rtl, isolate, listed_and
from .names import grapheme_count, shorten, utf16_length

MAX_TEXT = 4096
_Who = Callable[[int], str]
EMPTY_PILE = "—"
BOARD_NAME_LIMIT = 20
"""Boards show names up to this many characters; longer ones are cut, ending in "…"."""
TURN_LINE_NAME_LIMIT = 12
"""The ``Turn:`` line repeats a name only this short; the turn marker points at longer ones."""
FINAL_ROOM = MAX_TEXT - 1024
"""The final standings' share of a message: the events that ended the game go above them."""
ENDING_ROOM = 512
"""The most the line saying who won may take of the room the standings leave: past it, the
winners' names are cut as boards cut them."""
_HEADER_ROOM = 64
"""Kept free for the line that says how many earlier events a board leaves out."""
NAME_CUTS: tuple[Callable[[str], str], ...] = (
    lambda whole: whole,
    lambda text: shorten(text, BOARD_NAME_LIMIT),
    lambda text: shorten(text, TURN_LINE_NAME_LIMIT, units=2 * TURN_LINE_NAME_LIMIT),
)
"""How a message that lists many names cuts them, each tried in turn until the message fits."""


def name(text: str) -> str:
    """A user-supplied name, escaped for HTML."""
    return escape(text, quote=False)


def plain_text(markup: str) -> str:
    """HTML as a message shows it: no tags, character references resolved.

    >>> plain_text("<b>Ann &amp; Bob</b>")
    'Ann & Bob'
    """
    return unescape(re.sub(r"<[^>]+>", "", markup))


def shown_length(markup: str) -> int:
    """How long Telegram counts HTML: the UTF-16 units of the text it shows.

    >>> shown_length("<b>Ann &amp; 🃏</b>")
    8
    """
    return utf16_length(plain_text(markup))


def _person(text: str, tr: gettext.NullTranslations) -> str:
    """A user's name, whole, escaped, and isolated where its direction differs from the line's."""
    return isolate(name(text), tr)


def board_name(text: str, tr: gettext.NullTranslations) -> str:
    """A name as boards show it: cut past :data:`BOARD_NAME_LIMIT`, then as :func:`_person`."""
    return _person(shorten(text, BOARD_NAME_LIMIT), tr)


def _turn_marker(tr: gettext.NullTranslations) -> str:
    return "◀" if is_rtl(tr) else "▶"


def pile_counts(face_down: int, face_up: int, tr: gettext.NullTranslations) -> str:
    """``N face-down · M face-up``, each count with its plural form."""
    down = tr.ngettext("{count} face-down", "{count} face-down", face_down)
    up = tr.ngettext("{count} face-up", "{count} face-up", face_up)
    return f"{down.format(count=face_down)} · {up.format(count=face_up)}"


def render_table(table: TableView, tr: gettext.NullTranslations) -> str:
    """The table (one line per player, the pot, whose turn), or :func:`render_final` once over."""
    if table.final is not None:
        return render_final(
            table.game_id, table.final, tr, flips=table.flips, flip_limit=table.flip_limit
        )
    lines = []
    turn_marker = _turn_marker(tr) + " "
    for player in table.players:
        marker = turn_marker if player.is_turn else ""
        if player.status is SeatStatus.ACTIVE:
            top = isolate(str(player.top), tr) if player.top else EMPTY_PILE
            counts = pile_counts(player.face_down, player.face_up, tr)
            lines.append(f"{marker}<b>{board_name(player.name, tr)}</b>: {top} · {counts}")
        else:
            status = tr.gettext("out") if player.status is SeatStatus.OUT else tr.gettext("left")
            lines.append(f"<s>{board_name(player.name, tr)}</s>: {status}")
    if table.pot_top is not None:
        lines.append(
            tr.ngettext(
                "Snap Pot: {card} ({count} card)",
                "Snap Pot: {card} ({count} cards)",
                table.pot_size,
            ).format(card=isolate(str(table.pot_top), tr), count=table.pot_size)
        )
    turn = table.turn_player
    if turn is not None and grapheme_count(turn.name) <= TURN_LINE_NAME_LIMIT:
        lines.append(tr.gettext("Turn: {name}").format(name=f"<b>{_person(turn.name, tr)}</b>"))
    elif turn is not None:  # a long name is not repeated: the line points at the marker
        # Translators: {marker} is the turn marker at the start of a player's line (▶, or ◀
        # in a right-to-left language).
        text = tr.gettext("Turn: the player marked {marker}")
        lines.append(text.format(marker=_turn_marker(tr)))
    return directed("\n".join(lines), tr)


def render_final(
    game_id: int,
    final: FinalView,
    tr: gettext.NullTranslations,
    *,
    flips: int = 0,
    flip_limit: int | None = None,
) -> str:
    """The end of a game: how it ended, the places, cards, snaps and wrong calls, the fastest call.

    A limit-ended game names the flip limit if its flips reached ``flip_limit``, else the time.
    Names are whole where the message fits :data:`FINAL_ROOM`, else cut (:data:`NAME_CUTS`).
    """
    ending = _ending(final, flips, flip_limit, tr)
    for cut in NAME_CUTS:
        text = _final_text(game_id, final, tr, ending, cut)
        if shown_length(text) <= FINAL_ROOM:
            break
    return text


def _final_text(
    game_id: int,
    final: FinalView,
    tr: gettext.NullTranslations,
    ending: str,
    cut: Callable[[str], str],
) -> str:
    if final.reason is EndReason.ABANDONED:
        lines = [tr.gettext("🛑 <b>Game #{id} was stopped</b>: nobody wins.").format(id=game_id)]
    else:
        lines = [
            tr.gettext("🏁 <b>Game #{id}: final standings</b>").format(id=game_id),
            ending,
        ]
    lines += [_standing_line(row, cut(row.name), tr) for row in final.rows]
    if final.fastest is not None:
        lines.append(
            tr.gettext("⚡ Fastest correct call: {name}, {time}").format(
                name=f"<b>{_person(cut(final.fastest.name), tr)}</b>",
                time=milliseconds(final.fastest.reaction_ms, tr),
            )
        )
    lines.append(tr.gettext("/replay {id} sends the whole game, move by move.").format(id=game_id))
    return directed("\n".join(lines), tr)


def _standing_line(row: StandingRow, shown_name: str, tr: gettext.NullTranslations) -> str:
    if row.left_reason is LeaveReason.AFK:
        held = tr.gettext("removed as away")
    elif row.left_reason is LeaveReason.REMOVED:
        held = tr.gettext("removed")
    elif row.left_reason is LeaveReason.LEFT:
        held = tr.gettext("left")
    elif row.status is SeatStatus.OUT:
        held = tr.gettext("out")
    else:
        held = tr.ngettext("{count} card", "{count} cards", row.cards).format(count=row.cards)
    figures = [
        held,
        tr.ngettext("{count} snap won", "{count} snaps won", row.snaps_won).format(
            count=row.snaps_won
        ),
        tr.ngettext("{count} wrong call", "{count} wrong calls", row.wrong_calls).format(
            count=row.wrong_calls
        ),
    ]
    trophy = "🏆 " if row.is_winner else ""
    return f"{row.place}. {trophy}<b>{_person(shown_name, tr)}</b> — {' · '.join(figures)}"


def milliseconds(count: int, tr: gettext.NullTranslations) -> str:
    """A duration in milliseconds: ``312 ms``."""
    return tr.ngettext("{count} ms", "{count} ms", count).format(count=count)


def describe(op: Operation, table: TableView, tr: gettext.NullTranslations) -> str | None:
    """One line saying what an operation did, or None for operations players need not see."""

    def who(seat: int) -> str:
        return f"<b>{board_name(table.name_of_seat(seat), tr)}</b>"

    def card(op: CardFlipped) -> str:
        return isolate(str(op.card), tr)

    if isinstance(op, GameStarted):
        first = (op.dealer + 1) % op.player_count
        return tr.ngettext(
            "🃏 {dealer} deals {count} card; {first} flips first.",
            "🃏 {dealer} deals {count} cards; {first} flips first.",
            len(op.deck),
        ).format(dealer=who(op.dealer), count=len(op.deck), first=who(first))
    if isinstance(op, CardFlipped):
        if op.turned_over:
            return tr.gettext("{name} turns their pile over and flips {card}").format(
                name=who(op.seat), card=card(op)
            )
        return tr.gettext("{name} flips {card}").format(name=who(op.seat), card=card(op))
    if isinstance(op, SnapCalled):
        if op.verdict is not CallVerdict.WRONG:
            return None
        if op.call is CallKind.SNAP_POT:
            line = tr.gettext(
                "❌ {name} called Snap Pot!, but no face-up card matches the Snap Pot."
            )
        else:
            line = tr.gettext("❌ {name} called Snap!, but no two face-up cards match.")
        return line.format(name=who(op.seat))
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
        # Like the standings under it, whole names where they leave the message room.
        whole = _describe_end(
            op, lambda seat: f"<b>{_person(table.name_of_seat(seat), tr)}</b>", tr
        )
        if whole is None or shown_length(whole) <= ENDING_ROOM:
            return whole
        return _describe_end(op, who, tr)
    return None


def _describe_race(op: RaceResolved, who: _Who, tr: gettext.NullTranslations) -> str:
    if len(op.winners) > 1:
        return tr.ngettext(  # counted: a language may say two callers otherwise than three
            "🤝 {names} called together: the piles go into the Snap Pot.",
            "🤝 {names} called together: the piles go into the Snap Pot.",
            len(op.winners),
        ).format(names=listed_and((who(seat) for seat in op.winners), tr))
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


def _ending(
    final: FinalView, flips: int, flip_limit: int | None, tr: gettext.NullTranslations
) -> str:
    """The line naming how a game that was not stopped ended.

    A game won as the last player in was won by taking every card only if nobody left it (the
    cards of those who left were shared out, not won) and the Snap Pot is empty (its cards are
    nobody's); the players whose last cards tied into the pot share the win (R21).
    """
    if final.reason is EndReason.ALL_CARDS:
        if sum(row.is_winner for row in final.rows) > 1:
            return tr.gettext(
                "Their last cards went into the Snap Pot together: they share the win."
            )
        left = [row.left_reason is not None for row in final.rows if not row.is_winner]
        if left and all(left):
            return tr.gettext("Won because everyone else left the game.")
        if any(left):
            return tr.gettext("Won as the last player in: the others went out or left.")
        if final.pot:
            return tr.ngettext(
                "Won by taking every card outside the Snap Pot ({count} card stays in it).",
                "Won by taking every card outside the Snap Pot ({count} cards stay in it).",
                final.pot,
            ).format(count=final.pot)
        return tr.gettext("Won by taking every card.")
    if flip_limit is not None and flips >= flip_limit:
        return tr.ngettext(
            "The flip limit ({count} flip) was reached: the most cards wins.",
            "The flip limit ({count} flips) was reached: the most cards wins.",
            flip_limit,
        ).format(count=flip_limit)
    return tr.gettext("The time limit was reached: the most cards wins.")


def _describe_end(op: GameEnded, who: _Who, tr: gettext.NullTranslations) -> str | None:
    """Who won; nothing for a stopped game, whose standings and stop event both say it."""
    if op.reason is EndReason.ABANDONED:
        return None
    if len(op.winners) == 1:
        return tr.gettext("🏆 {name} wins the game!").format(name=who(op.winners[0]))
    return tr.ngettext(  # counted: Arabic says two winners otherwise than three
        "🏆 {names} share the win: each wins the game!",
        "🏆 {names} share the win: each wins the game!",
        len(op.winners),
    ).format(names=listed_and((who(seat) for seat in op.winners), tr))


def compose_board(
    events: Sequence[str],
    table: TableView,
    tr: gettext.NullTranslations,
    *,
    earlier: Sequence[str] = (),
) -> str:
    """A board message: what happened since the last one, then the table.

    ``earlier``: lines a live board showed before, above the new ones; short of room, they go
    first, unsaid. When the new events alone do not fit, the oldest are summarised.
    """
    board = render_table(table, tr)
    room = MAX_TEXT - _HEADER_ROOM - shown_length(board)
    lines = [*earlier, *events]
    lengths = [shown_length(directed(line, tr)) + 1 for line in lines]  # each with its newline
    used, dropped = sum(lengths), 0
    while dropped < len(lines) and used > room:
        used -= lengths[dropped]
        dropped += 1
    kept = lines[dropped:]
    summarised = max(0, dropped - len(earlier))
    header = (
        [
            tr.ngettext(
                "…and {count} earlier event", "…and {count} earlier events", summarised
            ).format(count=summarised)
        ]
        if summarised
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
