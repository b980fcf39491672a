"""User names cut to a length without breaking a character apart.

A "character" is what a reader sees as one (a letter with its combining marks, an emoji
with its modifiers or joined parts, a flag); cutting inside one leaves a broken glyph.

>>> graphemes("นิ้ว 👍🏽!")
['นิ้', 'ว', ' ', '👍🏽', '!']
>>> shorten("Alexandria Catherine Montgomery", 12)
'Alexandria…'
>>> shorten("Ann", 12)
'Ann'
>>> shorten("𝐀𝐁𝐂𝐃", 12, units=6), utf16_length("𝐀𝐁…")
('𝐀𝐁…', 5)
"""

from __future__ import annotations

import unicodedata

__all__ = ["ELLIPSIS", "grapheme_count", "graphemes", "shorten", "utf16_length"]

ELLIPSIS = "…"
ZWJ = "\u200d"


def _extends(char: str) -> bool:
    """Whether ``char`` belongs to the character before it rather than starting one."""
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF  # emoji skin tones
        or 0xE0020 <= code <= 0xE007F  # emoji tag sequences (subdivision flags)
        or char == ZWJ
    )


def _is_regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def graphemes(text: str) -> list[str]:
    """``text`` split into the characters a reader sees (an approximation of UAX #29)."""
    clusters: list[str] = []
    for char in text:
        if clusters and (
            _extends(char)
            or clusters[-1].endswith(ZWJ)
            or (
                _is_regional_indicator(char)
                and len(clusters[-1]) == 1
                and _is_regional_indicator(clusters[-1])
            )
        ):
            clusters[-1] += char
        else:
            clusters.append(char)
    return clusters


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
    clusters = graphemes(text)
    if len(clusters) <= limit and (units is None or utf16_length(text) <= units):
        return text
    kept = clusters[: limit - 1]
    while units is not None and kept and utf16_length("".join(kept)) >= units:
        kept.pop()
    return "".join(kept).rstrip() + ELLIPSIS
