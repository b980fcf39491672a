"""What a board message says happened: every event, summarised when there are too many.

When the events do not fit one message, each run of flips becomes one line per player with
the cards in order and every other event keeps its own line, so every card flipped and every
snap, tie, penalty and elimination is always in some message. When even the summary would
not fit, the board takes no more events (:func:`fits_together`): the next get their own.

>>> events = [flip_event("<b>Ann</b> flips 7♣", 0, "<b>Ann</b>", "7♣"),
...           flip_event("<b>Bob</b> flips K♦", 1, "<b>Bob</b>", "K♦"),
...           BoardEvent("⚡ <b>Ann</b> wins the Snap and takes 2 cards!"),
...           flip_event("<b>Ann</b> flips 2♠", 0, "<b>Ann</b>", "2♠")]
>>> import gettext
>>> for line in summarised(events, gettext.NullTranslations()): print(line)
<b>Ann</b> flips 1 card: 7♣
<b>Bob</b> flips 1 card: K♦
⚡ <b>Ann</b> wins the Snap and takes 2 cards!
<b>Ann</b> flips 1 card: 2♠
"""

from __future__ import annotations

import gettext
from collections.abc import Sequence
from dataclasses import dataclass

from ...game import CardFlipped, Operation
from ...services.views import TableView
from .boards import MAX_TEXT, board_name, describe, render_table, shown_length
from .i18n import directed, isolate

_ROOM_FOR_LAYOUT = 128
"""UTF-16 units kept free beside the events and the table (compose_board needs 64)."""


@dataclass(frozen=True, slots=True)
class Flip:
    """Who flipped which card, ready to show (HTML, isolated as in the event line)."""

    seat: int
    who: str
    card: str


@dataclass(frozen=True, slots=True)
class BoardEvent:
    """One event line of a board; a flip also says who flipped what, for summaries."""

    line: str
    flip: Flip | None = None


def flip_event(line: str, seat: int, who: str, card: str) -> BoardEvent:
    """The event of a flip: its full line, and the flipper and card for a summary."""
    return BoardEvent(line, Flip(seat, who, card))


def board_events(
    operations: Sequence[Operation], table: TableView, tr: gettext.NullTranslations
) -> list[BoardEvent]:
    """The events players see among ``operations``, each with its line (see ``describe``)."""
    events = []
    for op in operations:
        line = describe(op, table, tr)
        if line is None:
            continue
        if isinstance(op, CardFlipped):
            who = f"<b>{board_name(table.name_of_seat(op.seat), tr)}</b>"  # as describe() has it
            events.append(flip_event(line, op.seat, who, isolate(str(op.card), tr)))
        else:
            events.append(BoardEvent(line))
    return events


def board_lines(
    events: Sequence[BoardEvent], table: TableView, tr: gettext.NullTranslations
) -> list[str]:
    """The event lines a board shows: all of them if they fit, else the summary."""
    full = [event.line for event in events]
    if _within(full, _room_for_events(table, tr), tr):
        return full
    return summarised(events, tr)


def fits_together(
    events: Sequence[BoardEvent], table: TableView, tr: gettext.NullTranslations
) -> bool:
    """Whether one board can show all of ``events`` (summarised if need be) with ``table``."""
    room = _room_for_events(table, tr)
    full = [event.line for event in events]
    return _within(full, room, tr) or _within(summarised(events, tr), room, tr)


def summarised(events: Sequence[BoardEvent], tr: gettext.NullTranslations) -> list[str]:
    """Each run of flips as one line per player (first flipper first); other events whole."""
    lines: list[str] = []
    run: list[Flip] = []
    for event in events:
        if event.flip is not None:
            run.append(event.flip)
            continue
        lines += _flip_lines(run, tr)
        run = []
        lines.append(event.line)
    return lines + _flip_lines(run, tr)


def _flip_lines(run: Sequence[Flip], tr: gettext.NullTranslations) -> list[str]:
    by_seat: dict[int, list[Flip]] = {}
    for flip in run:
        by_seat.setdefault(flip.seat, []).append(flip)
    return [
        tr.ngettext(
            "{name} flips {count} card: {cards}", "{name} flips {count} cards: {cards}", len(flips)
        ).format(name=flips[0].who, count=len(flips), cards=" ".join(f.card for f in flips))
        for flips in by_seat.values()
    ]


def _room_for_events(table: TableView, tr: gettext.NullTranslations) -> int:
    """The UTF-16 units a board of ``table`` leaves for its event lines."""
    return MAX_TEXT - _ROOM_FOR_LAYOUT - shown_length(render_table(table, tr))


def _within(lines: Sequence[str], room: int, tr: gettext.NullTranslations) -> bool:
    return shown_length(directed("\n".join(lines), tr)) <= room
