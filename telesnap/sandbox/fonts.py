"""The fonts the pictures are drawn with, served to the page, so no text shows as boxes.

The page's Latin, Cyrillic and card symbols come from DejaVu Sans (shipped in
matplotlib), Thai and Arabic from the Noto font packages the charts use
(``fontpkg-noto-sans-*``); a browser on a machine without those fonts gets
them from here. No emoji font is packaged small enough on PyPI, so emoji come
from the system's own emoji fonts (the page's font list names them after these).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import fontpkg
import matplotlib

from ..bot.render.chart_fonts import PACKAGED_FAMILIES

SCRIPT_RANGES = {
    "Noto Sans Arabic": "U+0600-06FF, U+0750-077F, U+0870-08FF, U+FB50-FDFF, U+FE70-FEFF",
    "Noto Sans Thai": "U+0E00-0E7F",
}
"""The letters each packaged family is used for, so the base sans keeps the digits and Latin."""
BESIDES_EMOJI = "U+0000-1EFFF, U+1FB00-10FFFF"
"""The base sans for all but the emoji blocks (🃏 and the like go to an emoji font)."""
EMOJI_FAMILY = "Sandbox Emoji"
EMOJI_FONTS = ("Noto Color Emoji", "NotoColorEmoji", "Apple Color Emoji", "Segoe UI Emoji")
"""The system's emoji fonts, by name: the page's emoji come from the first one there."""
EMOJI_RANGE = "U+1F000-1FAFF, U+200D, U+FE0F, U+E0020-E007F"
"""Only emoji are taken from them (an emoji font has digits too, which must stay text)."""


@dataclass(frozen=True)
class ServedFont:
    """One font file as the page asks for it."""

    name: str
    """Its file name under ``/_sandbox/fonts/``."""
    family: str
    path: Path
    weight: str
    """The CSS ``font-weight`` it covers: one weight, or a variable font's range."""
    unicode_range: str = "U+0000-10FFFF"


@functools.cache
def served_fonts() -> tuple[ServedFont, ...]:
    """The base sans (regular and bold), then each packaged family's files."""
    dejavu = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    fonts = [
        ServedFont(name, "DejaVu Sans", dejavu / file, weight, BESIDES_EMOJI)
        for name, file, weight in (
            ("dejavu-sans.ttf", "DejaVuSans.ttf", "400"),
            ("dejavu-sans-bold.ttf", "DejaVuSans-Bold.ttf", "700"),
        )
    ]
    for family in PACKAGED_FAMILIES:
        described = fontpkg.family(family)
        for number, file in enumerate(described.files):
            if file.style != "normal":
                continue
            weight = f"{file.wght_min} {file.wght_max}" if file.variable else str(file.weight)
            name = f"{described.slug}-{number}.ttf"
            script = SCRIPT_RANGES.get(family, "U+0000-10FFFF")
            fonts.append(ServedFont(name, family, Path(file.path), weight, script))
    return tuple(fonts)


def font_faces() -> str:
    """The ``@font-face`` rules for every served font (``GET /_sandbox/fonts.css``)."""
    served = "".join(
        f'@font-face {{ font-family: "{font.family}"; font-weight: {font.weight}; '
        f"font-display: swap; unicode-range: {font.unicode_range}; "
        f'src: url("/_sandbox/fonts/{font.name}") format("truetype"); }}\n'
        for font in served_fonts()
    )
    local = ", ".join(f'local("{name}")' for name in EMOJI_FONTS)
    emoji = (
        f'@font-face {{ font-family: "{EMOJI_FAMILY}"; unicode-range: {EMOJI_RANGE}; '
        f"src: {local}; }}\n"
    )
    return served + emoji


def font_file(name: str) -> Path | None:
    """The file served as ``name``, or ``None`` for a name that is not one."""
    return next((font.path for font in served_fonts() if font.name == name), None)
