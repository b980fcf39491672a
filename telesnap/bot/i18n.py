"""Languages: gettext catalogs looked up by a chat's or a user's language code.

Messages are written in English in the code, marked with ``gettext`` /
``ngettext`` so Babel extracts them. A language without a compiled catalog
falls back to English.

>>> language_of("es-MX"), language_of("de"), language_of(None)
('es', 'en', 'en')
>>> translator("en").gettext("Flip")
'Flip'
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
