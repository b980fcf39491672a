"""Manage the gettext catalogs with Babel: extract, update, compile.

Run from anywhere (it works in the repository root)::

    python scripts/i18n.py            # extract, then update every catalog (the usual step)
    python scripts/i18n.py extract    # the code's English messages -> telesnap/locales/telesnap.pot
    python scripts/i18n.py update     # the template -> every language's .po (new ones created)
    python scripts/i18n.py compile    # every .po -> .mo (the install does this too)

Each step is one ``pybabel`` command, printed before it runs (see the README).
After ``update``, translate the new entries (empty ``msgstr``, or ``#, fuzzy``
ones: check the suggestion, then delete the flag);
``pytest tests/bot/test_i18n.py`` fails until every language is complete.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from babel.messages.frontend import CommandLineInterface

from telesnap.services.settings import DEFAULT_LANGUAGE, LANGUAGES

ROOT = Path(__file__).resolve().parents[1]
LOCALES = "telesnap/locales"
DOMAIN = "telesnap"
TEMPLATE = f"{LOCALES}/{DOMAIN}.pot"
TRANSLATED = tuple(language for language in LANGUAGES if language != DEFAULT_LANGUAGE)
"""The languages with a catalog (English is the language of the code)."""

EXTRACT = [
    "extract",
    "-F",
    "babel.cfg",
    "-k",
    "ngettext:1,2",
    "--add-comments=Translators:",
    "--add-location=file",
    "--sort-by-file",
    "--project=telesnap",
    "--copyright-holder=the telesnap authors",
    "-o",
    TEMPLATE,
    "telesnap",
]
UPDATE = [
    "update",
    "-i",
    TEMPLATE,
    "-d",
    LOCALES,
    "-D",
    DOMAIN,
    "--ignore-obsolete",
    "--ignore-pot-creation-date",
    "--previous",
]
COMPILE = ["compile", "-d", LOCALES, "-D", DOMAIN, "--statistics"]


def pybabel(arguments: list[str]) -> None:
    """Run one ``pybabel`` command in the repository root."""
    print("$ pybabel " + " ".join(arguments), flush=True)
    CommandLineInterface().run(["pybabel", *arguments])


def extract() -> None:
    """Write the template from the code."""
    pybabel(EXTRACT)


def update() -> None:
    """Merge the template into every language's catalog, creating the missing ones."""
    for language in TRANSLATED:
        pybabel([*UPDATE, "-l", language, "--init-missing"])


def compile_catalogs() -> None:
    """Compile every catalog to a .mo file next to it."""
    pybabel(COMPILE)


def main(argv: list[str]) -> int:
    """Run the steps named on the command line (default: extract and update)."""
    steps = {"extract": [extract], "update": [update], "compile": [compile_catalogs]}
    names = argv or ["refresh"]
    steps["refresh"] = [extract, update]
    unknown = [name for name in names if name not in steps]
    if unknown:
        print(f"unknown step {unknown[0]!r}: use extract, update, compile or refresh")
        return 2
    os.chdir(ROOT)
    for name in names:
        for step in steps[name]:
            step()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
