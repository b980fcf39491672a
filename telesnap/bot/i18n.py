"""Languages: gettext catalogs looked up by a chat's or a user's language code.

Messages are written in English in the code, marked with ``gettext`` /
``ngettext`` so Babel extracts them (``scripts/i18n.py``). The catalogs live
in ``telesnap/locales/<lang>/LC_MESSAGES/telesnap.po``; the install compiles
them to ``.mo`` files next to them. A language without a compiled catalog
falls back to English.

>>> language_of("es-MX"), language_of("de"), language_of(None)
('es', 'en', 'en')
>>> translator("en").gettext("Flip")
'Flip'

Right-to-left text: a user name or a card inside a translated line is wrapped
in Unicode isolates, so "10♥" or a Latin name stays readable inside an Arabic
line, and every line of an Arabic message starts with a right-to-left mark.
English text is left exactly as written.

>>> isolate("Ann", translator("en"))
'Ann'
>>> directed("one line", translator("en"))
'one line'
"""

from __future__ import annotations

import functools
import gettext
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locales"
DOMAIN = "telesnap"
DEFAULT_LANGUAGE = "en"
LANGUAGES = ("en", "mk", "sw", "es", "ar", "th")
"""English and the languages of the rule documents the game came with."""
RTL_LANGUAGES = frozenset({"ar"})
"""The languages written right to left."""

FSI = "\u2068"
"""FIRST STRONG ISOLATE: starts a run laid out on its own (a name, a card)."""
PDI = "\u2069"
"""POP DIRECTIONAL ISOLATE: ends the run :data:`FSI` started."""
RLM = "\u200f"
"""RIGHT-TO-LEFT MARK: makes the line it starts a right-to-left line."""


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


def isolate(text: str, tr: gettext.NullTranslations) -> str:
    """``text`` (a name, a card) as a run of its own inside a translated line.

    In every translated language the text is wrapped in FSI ... PDI, so an Arabic
    name in a Spanish line, or a Latin name or ``10♥`` in an Arabic line, neither
    reorders its neighbours nor is reordered; English is left unchanged.
    """
    if language_of_translations(tr) == DEFAULT_LANGUAGE:
        return text
    return f"{FSI}{text}{PDI}"


def directed(text: str, tr: gettext.NullTranslations) -> str:
    """``text`` with every line set in the language's direction.

    Telegram clients pick each line's direction from its first letter, which
    in a table line is a name or a card; in a right-to-left language each
    non-empty line therefore starts with :data:`RLM`. Other languages are
    left unchanged, and a line already marked is not marked twice.
    """
    if not is_rtl(tr):
        return text
    return "\n".join(
        RLM + line if line and not line.startswith(RLM) else line for line in text.split("\n")
    )
