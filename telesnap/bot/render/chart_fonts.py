"""Fonts and text layout for the pictures, in every language, with no system fonts.

matplotlib's DejaVu Sans has no Thai, so the Noto Sans Thai and Arabic packages from PyPI
are registered at import, and every text is drawn with a list of families so a glyph
missing from the first comes from the next. Arabic must be shaped and laid out right to
left: matplotlib 3.11 and later do it (libraqm), older releases get :func:`chart_text`
(python-bidi's Python implementation, which mirrors brackets, unlike its Rust one).
Characters no font has are left out rather than drawn as boxes (:func:`drawable`).
"""

from __future__ import annotations

import functools
import unicodedata

import arabic_reshaper
import fontpkg
import matplotlib
from bidi.algorithm import get_display
from matplotlib import font_manager
from matplotlib.font_manager import FontProperties

__all__ = [
    "BASE_FAMILY",
    "LAYS_OUT_TEXT",
    "PACKAGED_FAMILIES",
    "chart_text",
    "drawable",
    "families_for",
    "register_fonts",
    "shaped",
]

BASE_FAMILY = "DejaVu Sans"
"""matplotlib's own font: Latin, Cyrillic and the symbols of the cards."""
PACKAGED_FAMILIES = ("Noto Sans Arabic", "Noto Sans Thai")
"""The families installed as Python packages (see pyproject.toml)."""
_FIRST_FAMILY = {"ar": "Noto Sans Arabic", "th": "Noto Sans Thai"}
LAYS_OUT_TEXT = "text.language" in matplotlib.rcParams
"""Whether this matplotlib shapes and orders complex text itself (3.11 and later, libraqm)."""


@functools.cache
def register_fonts() -> tuple[str, ...]:
    """Add the packaged font files to matplotlib's font manager (once); return their families."""
    for family in PACKAGED_FAMILIES:
        for font in fontpkg.family(family).files:
            font_manager.fontManager.addfont(str(font.path))
    return PACKAGED_FAMILIES


def families_for(language: str) -> list[str]:
    """The font families to draw ``language``'s text with, the language's own script first."""
    first = _FIRST_FAMILY.get(language, BASE_FAMILY)
    return [first, *(f for f in (BASE_FAMILY, *PACKAGED_FAMILIES) if f != first)]


def chart_text(text: str) -> str:
    """``text`` as it must be handed to matplotlib: shaped and in visual order if it must be.

    >>> chart_text("Rating") == "Rating"
    True
    """
    if LAYS_OUT_TEXT or not any(unicodedata.bidirectional(c) in ("R", "AL") for c in text):
        return text
    return str(get_display(shaped(text)))


_JOINER = "\u200d"


def shaped(text: str) -> str:
    """Arabic letters in their joined forms (arabic-reshaper), zero-width joiners left out.

    arabic-reshaper 3.1 raises IndexError on a joiner anywhere before a lam-alef; the joiners
    of a name's emoji (👩‍💻) join nothing these pictures draw.

    >>> shaped("\u200d لا") == shaped(" لا")
    True
    """
    return str(arabic_reshaper.reshape(text.replace(_JOINER, "")))


@functools.lru_cache(maxsize=8192)
def _covered(character: str, families: tuple[str, ...]) -> bool:
    code = ord(character)
    for family in families:
        path = font_manager.findfont(FontProperties(family=family), fallback_to_default=False)
        if font_manager.get_font(path).get_char_index(code):
            return True
    return False


def drawable(text: str, language: str) -> str:
    """``text`` without the characters none of the language's fonts can draw ("?" if none left).

    >>> drawable("Ann 🦊", "es")
    'Ann'
    """
    families = tuple(families_for(language))
    kept = "".join(c for c in text if c.isspace() or _covered(c, families))
    return " ".join(kept.split()) or "?"


register_fonts()
