"""/replay as a film: an animated GIF that Telegram plays inline, one frame per move.

The words come from ``render.describe``, so the film says what the boards said. Frames use
a few colours cut to a small palette, to keep the GIF small. Text is laid out here rather
than by Pillow's complex-text engine, which needs libraqm (not present everywhere); each
run is drawn in the first font that has it, and characters no font has are left out.
"""

from __future__ import annotations

import functools
import gettext
import io
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import fontpkg
import matplotlib
from bidi.algorithm import get_display
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFont

from ...game import Card, CardFlipped, EndReason, Game, GameEnded, Operation, SeatStatus
from ...game.apply import apply_operation
from ...services.views import TableView
from .boards import board_name, describe, plain_text
from .chart_fonts import shaped
from .i18n import is_rtl
from .names import shorten

__all__ = ["Frame", "film_frames", "replay_film"]

WIDTH = 640
_ROW = 34
_TOP = 46
_BOTTOM = 78
_FLIP_MS = 550
_EVENT_MS = 1600
_LAST_MS = 6000
_MIN_MS = 60
_TARGET_MS = 90_000
"""A long game is played faster, so the film lasts about a minute and a half at most."""

_GREEN = (21, 94, 60)
_DARK = (12, 60, 38)
_CARD = (250, 250, 245)
_RED = (200, 30, 45)
_BLACK = (25, 25, 25)
_TEXT = (240, 240, 235)
_DIM = (150, 175, 160)
_GOLD = (245, 200, 70)
_CONTROLS = re.compile("[\u200e\u200f\u2066-\u2069\u061c]")


@dataclass(frozen=True, slots=True)
class Frame:
    """The table after one move players see, and what the board said about it."""

    table: TableView
    event: str
    """The move's line as plain text (tags and character references resolved)."""
    milliseconds: int


def film_frames(
    history: Sequence[Operation], names: Sequence[str], tr: gettext.NullTranslations
) -> list[Frame]:
    """One frame per move that a board described, each with how long it stays.

    >>> from telesnap.game import Card
    >>> deck = [Card.parse(text) for text in ("7♣", "7♥", "2♠", "K♦")]
    >>> game = Game()
    >>> _ = game.deal(2, dealer=0, deck=deck)
    >>> _ = game.flip(1); _ = game.flip(0)
    >>> frames = film_frames(game.history, ["Ann", "Bob"], gettext.NullTranslations())
    >>> [frame.event for frame in frames]
    ['🃏 Ann deals 4 cards; Bob flips first.', 'Bob flips 2♠', 'Ann flips K♦']
    """
    game = Game()
    user_ids = [0] * len(names)
    frames: list[Frame] = []
    for op in history:
        apply_operation(game, op)
        table = TableView.of(0, game, user_ids, list(names))
        line = describe(op, table, tr)
        if isinstance(op, GameEnded) and op.reason is EndReason.ABANDONED:
            line = tr.gettext("🛑 stopped: nobody won")  # a board's standings say it there
        if line is None:
            continue
        pause = _FLIP_MS if isinstance(op, CardFlipped) else _EVENT_MS
        frames.append(Frame(table, plain_text(line), pause))
    if not frames:
        return frames
    total = sum(frame.milliseconds for frame in frames)
    scale = min(1.0, _TARGET_MS / total)
    timed = [
        Frame(frame.table, frame.event, max(_MIN_MS, round(frame.milliseconds * scale)))
        for frame in frames
    ]
    last = timed[-1]
    timed[-1] = Frame(last.table, last.event, _LAST_MS)
    return timed


def replay_film(
    game_id: int,
    history: Sequence[Operation],
    names: Sequence[str],
    tr: gettext.NullTranslations,
) -> bytes:
    """The game as an animated GIF (it loops), or empty bytes when no move was shown."""
    frames = film_frames(history, names, tr)
    if not frames:
        return b""
    painter = _Painter(tr, len(names))
    drawn = [painter.frame(game_id, frame) for frame in frames]
    # One palette for every frame: a pixel that did not change keeps its index, so each
    # frame stores only the part of the table that moved.
    palette = _palette()
    pictures = [picture.quantize(palette=palette, dither=Image.Dither.NONE) for picture in drawn]
    out = io.BytesIO()
    pictures[0].save(
        out,
        format="GIF",
        save_all=True,
        append_images=pictures[1:],
        duration=[frame.milliseconds for frame in frames],
        loop=0,
        optimize=True,
        disposal=1,
    )
    return out.getvalue()


@functools.cache
def _palette() -> Image.Image:
    """Every colour a frame uses, with the blends that smooth text on each background."""
    inks = (_TEXT, _DIM, _GOLD, _RED, _BLACK)
    swatches = [
        tuple(round(b + (i - b) * step / 4) for i, b in zip(ink, ground, strict=True))
        for ground in (_GREEN, _DARK, _CARD)
        for ink in inks
        for step in range(5)
    ]
    sample = Image.new("RGB", (len(swatches), 1))
    sample.putdata(swatches)
    return sample.quantize(colors=64, method=Image.Quantize.FASTOCTREE)


class _Painter:
    """Draws frames of one size, in one language."""

    def __init__(self, tr: gettext.NullTranslations, seats: int) -> None:
        self._tr = tr
        self._rtl = is_rtl(tr)
        self._height = _TOP + seats * _ROW + 44 + _BOTTOM

    def frame(self, game_id: int, frame: Frame) -> Image.Image:
        picture = Image.new("RGB", (WIDTH, self._height), _GREEN)
        draw = ImageDraw.Draw(picture)
        draw.rectangle((0, 0, WIDTH, _TOP - 10), fill=_DARK)
        table = frame.table
        _write(draw, (14, 8), f"telesnap  #{game_id}   ↻ {table.flips}", 18, _TEXT, False)
        for index, player in enumerate(table.players):
            top = _TOP + index * _ROW
            out = player.status is not SeatStatus.ACTIVE
            colour = _DIM if out else (_GOLD if player.is_turn else _TEXT)
            if player.is_turn:
                draw.polygon([(8, top + 9), (18, top + 15), (8, top + 21)], fill=_GOLD)
            shown = plain_text(board_name(player.name, self._tr))  # "a former player", translated
            _write(draw, (26, top + 4), shorten(shown, 18), 17, colour, self._rtl)
            _card(draw, (300, top + 1), player.top)
            counts = f"▼ {player.face_down}   ▲ {player.face_up}"
            _write(draw, (352, top + 6), counts, 15, colour, False)
        pot_top = _TOP + len(table.players) * _ROW + 6
        if table.pot_top is not None:
            pot = self._tr.ngettext(
                "Snap Pot: {card} ({count} card)",
                "Snap Pot: {card} ({count} cards)",
                table.pot_size,
            ).format(card=table.pot_top, count=table.pot_size)
            _write(draw, (26, pot_top + 8), pot, 16, _GOLD, self._rtl)
        band = self._height - _BOTTOM
        draw.rectangle((0, band, WIDTH, self._height), fill=_DARK)
        words = " ".join(frame.event.split())
        lines = textwrap.wrap(words, 56, break_long_words=False, break_on_hyphens=False)
        for number, text in enumerate(lines[:2]):
            _write(draw, (14, band + 10 + number * 28), text, 17, _TEXT, self._rtl)
        return picture


def _card(draw: ImageDraw.ImageDraw, at: tuple[int, int], card: Card | None) -> None:
    x, y = at
    if card is None:
        draw.rounded_rectangle((x, y, x + 40, y + 30), radius=4, outline=_DIM, width=1)
        return
    draw.rounded_rectangle((x, y, x + 40, y + 30), radius=4, fill=_CARD)
    colour = _RED if card.suit.is_red else _BLACK
    _write(draw, (x + 4, y + 5), str(card), 16, colour, False)


def _write(
    draw: ImageDraw.ImageDraw,
    at: tuple[int, int],
    text: str,
    size: int,
    colour: tuple[int, int, int],
    rtl: bool,
) -> None:
    """Draw ``text`` in visual order, each run in the first font that has its characters."""
    # python-bidi orders the line itself and knows no isolates: the marks go first.
    visual = get_display(shaped(legible(_CONTROLS.sub("", text))), base_dir="R" if rtl else "L")
    x, y = at
    if rtl:
        x = WIDTH - x - sum(_width(run, path, size) for run, path in _runs(visual))
    for run, path in _runs(visual):
        font = _font(path, size)
        draw.text((x, y), run, font=font, fill=colour)
        x += _width(run, path, size)


def legible(text: str) -> str:
    """``text`` as the film can draw it: characters no font has left out.

    A word made only of them goes with the space that set it apart: an event's emoji would
    leave a gap at the start of its line.

    >>> legible("\U0010fffd Dan left, \U0010fffd sad \U0010fffd")
    'Dan left, sad'
    """
    kept: list[str] = []
    drawn = dropped = False  # in the word so far
    for char in text:
        if char == " ":
            gap = dropped and not drawn
            drawn = dropped = False
            if not gap:
                kept.append(char)
        elif char.isspace() or _font_for(char):
            kept.append(char)
            drawn = True
        else:
            dropped = True
    if dropped and not drawn and kept and kept[-1] == " ":
        kept.pop()
    return "".join(kept)


def _runs(text: str) -> Iterator[tuple[str, Path]]:
    run, path = "", None
    for char in text:
        found = _font_for(char) if not char.isspace() else path or _FONTS()[0][0]
        if found is None:
            continue
        if path is not None and found != path and run:
            yield run, path
            run = ""
        run, path = run + char, found
    if run and path is not None:
        yield run, path


def _width(run: str, path: Path, size: int) -> int:
    return int(_font(path, size).getlength(run))


@functools.cache
def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size, layout_engine=ImageFont.Layout.BASIC)


@functools.cache
def _FONTS() -> tuple[tuple[Path, frozenset[int]], ...]:  # noqa: N802 - a cached constant
    """The fonts in the order they are tried, each with the characters it has."""
    paths = [Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"]
    for family in ("Noto Sans Arabic", "Noto Sans Thai"):
        paths += [Path(font.path) for font in fontpkg.family(family).files]
    return tuple((path, _characters(path)) for path in paths)


def _characters(path: Path) -> frozenset[int]:
    with TTFont(str(path)) as font:  # closed at once: an open font file would wait for the GC
        return frozenset(font.getBestCmap())


@functools.cache
def _font_for(char: str) -> Path | None:
    code = ord(char)
    return next((path for path, chars in _FONTS() if code in chars), None)
