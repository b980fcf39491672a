"""User names cut to a length without breaking a character apart.

A "character" is what a reader sees as one (a letter with its combining marks, an emoji
with its modifiers or joined parts, a flag); cutting inside one leaves a broken glyph.

>>> graphemes("นิ้ว 👍🏽! กำ")
['นิ้', 'ว', ' ', '👍🏽', '!', ' ', 'กำ']
>>> shorten("Alexandria Catherine Montgomery", 12)
'Alexandria…'
>>> shorten("Ann", 12)
'Ann'
>>> shorten("𝐀𝐁𝐂𝐃", 12, units=6), utf16_length("𝐀𝐁…")
('𝐀𝐁…', 5)
"""

from __future__ import annotations

import regex

__all__ = [
    "ELLIPSIS",
    "TYPED_WORD_LIMIT",
    "grapheme_count",
    "graphemes",
    "shorten",
    "utf16_length",
]

ELLIPSIS = "…"
TYPED_WORD_LIMIT = 33
"""How much of a word a user typed (a command, a setting's name) an answer repeats: the
longest command Telegram has, a slash and 32 characters."""
_GRAPHEME = regex.compile(r"\X")
"""An extended grapheme cluster (Unicode's UAX #29), which the ``regex`` package knows."""


def graphemes(text: str) -> list[str]:
    """``text`` split into the characters a reader sees."""
    return _GRAPHEME.findall(text)


def grapheme_count(text: str) -> int:
    """How many characters a reader sees in ``text``."""
    return len(graphemes(text))


def utf16_length(text: str) -> int:
    """How long Telegram counts ``text``: in UTF-16 code units (an emoji is often two)."""
    return len(text.encode("utf-16-le")) // 2


def shorten(text: str, limit: int, *, units: int | None = None) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit - 1`` and "…".

    ``units``: the cut name is also at most this long in UTF-16 units, as one character can
    be many (an emoji family, a letter under a stack of marks).
    """
    fits_units = units is None or utf16_length(text) <= units
    if len(text) <= limit and fits_units:  # no more clusters than code points: no need to split
        return text
    clusters = graphemes(text)
    if len(clusters) <= limit and fits_units:
        return text
    kept = clusters[: limit - 1]
    while units is not None and kept and utf16_length("".join(kept)) >= units:
        kept.pop()
    return "".join(kept).rstrip() + ELLIPSIS
