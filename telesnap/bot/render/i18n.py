"""Languages: gettext catalogs looked up by a chat's or a user's language code.

A language without a compiled catalog falls back to English.

>>> language_of("es-MX"), language_of("de"), language_of(None)
('es', 'en', 'en')
>>> translator("en").gettext("Flip")
'Flip'

A name or a card is wrapped in Unicode isolates only where its direction differs from the
line's, so it neither reorders its neighbours nor is reordered. Every line of an Arabic
message starts with a right-to-left mark, and each command with its arguments is a
left-to-right isolate, so it reads whole and the line does not carry its slash to the other end.

>>> isolate("Ann", translator("es")), isolate("10♥", translator("es"))
('Ann', '10♥')
>>> isolate("محمد", translator("es")) == FSI + "محمد" + PDI
True
>>> directed("one line", translator("en"))
'one line'
"""

from __future__ import annotations

import functools
import gettext
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from ...services.privacy import FORMER_PLAYER

# The list of languages has its home in the services (the language setting allows exactly
# these); the bot's modules take it from here, with the catalogs it names.
from ...services.settings import DEFAULT_LANGUAGE as DEFAULT_LANGUAGE
from ...services.settings import LANGUAGES as LANGUAGES

LOCALE_DIR = Path(__file__).resolve().parents[2] / "locales"
DOMAIN = "telesnap"
RTL_LANGUAGES = frozenset({"ar"})
"""The languages written right to left."""

FSI = "\u2068"
"""FIRST STRONG ISOLATE: starts a run laid out on its own (a name, a card)."""
PDI = "\u2069"
"""POP DIRECTIONAL ISOLATE: ends the run :data:`FSI` started."""
LRI = "\u2066"
"""LEFT-TO-RIGHT ISOLATE: starts a run laid out left to right on its own (a command)."""
RLM = "\u200f"
"""RIGHT-TO-LEFT MARK: makes the line it starts a right-to-left line."""

RLI = "\u2067"
"""RIGHT-TO-LEFT ISOLATE: starts a run laid out right to left on its own."""

_COMMAND = r"(?<![\w/<])/[a-z][a-z0-9_]*(?:@\w+)?(?: [A-Za-z0-9_]+)*"
"""A command with its Latin arguments; not a path, not a closing tag."""
_HAS_COMMAND = re.compile(_COMMAND)
_ATTRIBUTES_ISOLATE_OR_COMMAND = re.compile(rf"<\w+\s[^>]*>|[{LRI}{RLI}{FSI}{PDI}]|{_COMMAND}")
"""What :func:`directed` looks at: a tag's attributes (a link) and an isolate's start or end,
which it skips, or a command, which it wraps."""
_EXPLICIT = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
"""Bidi classes of the explicit direction controls: a run holding one is always isolated."""
_AGAINST_LTR = frozenset({"R", "AL"}) | _EXPLICIT
"""Bidi classes that can reorder a left-to-right line (right-to-left letters, controls)."""
_AGAINST_RTL = frozenset({"L", "EN"}) | _EXPLICIT
"""Bidi classes that read differently in a right-to-left line (Latin letters, European digits)."""


def language_of(code: str | None) -> str:
    """The supported language for a Telegram ``language_code`` (English if unsupported)."""
    base = (code or "").split("-")[0].split("_")[0].lower()
    return base if base in LANGUAGES else DEFAULT_LANGUAGE


@functools.cache
def translator(language: str) -> gettext.NullTranslations:
    """The translations for ``language`` (a code from :data:`LANGUAGES`)."""
    return gettext.translation(
        DOMAIN, localedir=LOCALE_DIR, languages=[language_of(language)], fallback=True
    )


def language_of_translations(tr: gettext.NullTranslations) -> str:
    """The language ``tr`` translates into (English when no catalog is loaded).

    >>> language_of_translations(translator("en"))
    'en'
    """
    return language_of(tr.info().get("language"))


def is_rtl(tr: gettext.NullTranslations) -> bool:
    """Whether ``tr`` translates into a right-to-left language.

    >>> is_rtl(translator("en"))
    False
    """
    return language_of_translations(tr) in RTL_LANGUAGES


def listed(items: Iterable[str], tr: gettext.NullTranslations) -> str:
    """``items`` as a list in ``tr``'s language (Arabic separates them with its own comma).

    >>> listed(["Ann", "Bob"], translator("ar"))
    'Ann، Bob'
    """
    return tr.pgettext("list separator", ", ").join(items)


def listed_and(items: Iterable[str], tr: gettext.NullTranslations) -> str:
    """``items`` as a list whose last two are joined by the language's "and".

    >>> listed_and(["Ann", "Bob", "Cid"], translator("en"))
    'Ann, Bob and Cid'
    >>> listed_and(["Ann"], translator("es"))
    'Ann'
    """
    *names, last = items
    if not names:
        return last
    return tr.gettext("{names} and {last}").format(names=listed(names, tr), last=last)


def isolate(text: str, tr: gettext.NullTranslations) -> str:
    """``text`` (a name, a card) as a run of its own inside a line in ``tr``'s language.

    Wrapped in FSI ... PDI only when that changes how the line reads, and always around an
    explicit direction control (which the isolate keeps from leaking out).
    """
    if text == FORMER_PLAYER:  # a person who erased their data, in the line's language
        text = tr.gettext("a former player")
    against = _AGAINST_RTL if is_rtl(tr) else _AGAINST_LTR
    if any(unicodedata.bidirectional(char) in against for char in text):
        return f"{FSI}{text}{PDI}"
    return text


def directed(text: str, tr: gettext.NullTranslations) -> str:
    """``text`` with every line set in the language's direction.

    Telegram clients pick a line's direction from its first letter (a name or a card, in a
    table line), so in a right-to-left language each non-empty line starts with :data:`RLM`
    and each command is wrapped in :data:`LRI` ... :data:`PDI`, never twice, never inside a tag
    or an isolated run (a name, a chat title: people's text is shown as they typed it).

    >>> directed("/replay 6", translator("ar")) == RLM + LRI + "/replay 6" + PDI
    True
    """
    if not is_rtl(tr):
        return text
    if _HAS_COMMAND.search(text):  # most boards have none: a quick look is enough
        text = _ATTRIBUTES_ISOLATE_OR_COMMAND.sub(_CommandIsolator(), text)
    return "\n".join(
        RLM + line if line and not line.startswith(RLM) else line for line in text.split("\n")
    )


class _CommandIsolator:
    """Wraps each command outside tags and isolates (a name, a title, a wrapped command).

    What people typed is isolated where it is put in a right-to-left line, so it stays as typed.
    """

    def __init__(self) -> None:
        self._depth = 0

    def __call__(self, match: re.Match[str]) -> str:
        found = match[0]
        if found in (LRI, RLI, FSI):
            self._depth += 1
        elif found == PDI:
            self._depth = max(0, self._depth - 1)
        elif found.startswith("/") and not self._depth:
            return f"{LRI}{found}{PDI}"
        return found
