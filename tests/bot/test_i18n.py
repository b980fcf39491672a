"""The translations: complete, not fuzzy, same placeholders as the English, right plurals.

The reference is a fresh extraction from the code (the documented
``pybabel extract`` command of scripts/i18n.py), so an English message added to
the code fails these tests until it is extracted and translated in every
language (``python scripts/i18n.py``, translate, ``python scripts/i18n.py compile``).
"""

from __future__ import annotations

import gettext
import importlib.util
import io
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.frontend import CommandLineInterface
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from telegram import Bot, BotCommandScopeAllPrivateChats

from telesnap.bot.handlers.menu import (
    PRIVATE_CHAT_COMMANDS,
    command_descriptions,
    menu_commands,
    publish_commands,
)
from telesnap.bot.render.boards import compose_board, render_table
from telesnap.bot.render.i18n import (
    DEFAULT_LANGUAGE,
    FSI,
    LANGUAGES,
    LOCALE_DIR,
    PDI,
    RLM,
    directed,
    is_rtl,
    isolate,
    language_of_translations,
    translator,
)
from telesnap.bot.render.lobby import render_lobby
from telesnap.bot.render.rules_text import full_rules
from telesnap.bot.render.settings_menu import LANGUAGE_NAMES
from telesnap.emulator.testing import running_emulator
from telesnap.game import SeatStatus
from telesnap.game.cards import parse_card
from telesnap.services.settings import SPECS
from telesnap.services.views import LobbyView, PlayerView, TableView

ROOT = Path(__file__).resolve().parents[2]
TRANSLATED = [language for language in LANGUAGES if language != DEFAULT_LANGUAGE]

PLURAL_RULES: dict[str, tuple[int, Callable[[int], int]]] = {
    "mk": (2, lambda n: 0 if n % 10 == 1 and n % 100 != 11 else 1),
    "sw": (2, lambda n: 0 if n == 1 else 1),
    "es": (3, lambda n: 0 if n == 1 else 1 if n != 0 and n % 1_000_000 == 0 else 2),
    "ar": (
        6,
        lambda n: (
            0
            if n == 0
            else 1
            if n == 1
            else 2
            if n == 2
            else 3
            if 3 <= n % 100 <= 10
            else 4
            if 11 <= n % 100 <= 99
            else 5
        ),
    ),
    "th": (1, lambda n: 0),
}
"""Per language: the number of plural forms, and which form a count takes (CLDR)."""
SAMPLE_COUNTS = (0, 1, 2, 3, 5, 10, 11, 12, 21, 99, 100, 101, 102, 111, 1_000_000)

PLACEHOLDER = re.compile(r"\{[^{}]*\}")
TAG = re.compile(r"</?[a-z]+>")
COMMAND = re.compile(r"(?<![\w/])/[a-z_]+")


def _load_i18n_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("i18n_script", ROOT / "scripts" / "i18n.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fresh_template(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The template extracted from the code now, with the documented command."""
    script = _load_i18n_script()
    output = tmp_path_factory.mktemp("i18n") / "telesnap.pot"
    arguments = [
        str(ROOT / argument) if argument in ("babel.cfg", "telesnap") else argument
        for argument in script.EXTRACT
    ]
    arguments[arguments.index(script.TEMPLATE)] = str(output)
    CommandLineInterface().run(["pybabel", "-q", *arguments])
    with output.open("rb") as file:
        return read_po(file)


def _catalog(language: str) -> Catalog:
    with (LOCALE_DIR / language / "LC_MESSAGES" / "telesnap.po").open("rb") as file:
        return read_po(file, locale=language)


def _messages(catalog: Catalog) -> Iterator[Message]:
    return (message for message in catalog if message.id)


def _key(message: Message) -> str | tuple[str, ...]:
    return message.id if isinstance(message.id, str) else tuple(message.id)


def _forms(message: Message) -> list[str]:
    if isinstance(message.string, str):
        return [message.string]
    return list(message.string)


def _english(message: Message) -> list[str]:
    return [message.id] if isinstance(message.id, str) else list(message.id)


def _compiled(language: str) -> gettext.GNUTranslations:
    """The language's .po compiled in memory, as the install compiles it."""
    buffer = io.BytesIO()
    write_mo(buffer, _catalog(language), use_fuzzy=False)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def _short(items: list[Any]) -> str:
    return "\n".join(f"  {item!r}" for item in items[:20]) + (
        f"\n  ... and {len(items) - 20} more" if len(items) > 20 else ""
    )


# -- the catalogs -------------------------------------------------------------------


def test_the_template_is_up_to_date(fresh_template: Catalog) -> None:
    with (LOCALE_DIR / "telesnap.pot").open("rb") as file:
        committed = {_key(message) for message in _messages(read_po(file))}
    fresh = {_key(message) for message in _messages(fresh_template)}
    assert fresh == committed, (
        "telesnap/locales/telesnap.pot is out of date: run `python scripts/i18n.py`.\n"
        f"new in the code:\n{_short(sorted(map(str, fresh - committed)))}\n"
        f"gone from the code:\n{_short(sorted(map(str, committed - fresh)))}"
    )


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated(fresh_template: Catalog, language: str) -> None:
    catalog = _catalog(language)
    nplurals = PLURAL_RULES[language][0]
    missing = []
    for english in _messages(fresh_template):
        message = catalog.get(english.id, english.context)
        if (
            message is None
            or not all(_forms(message))
            or (english.pluralizable and len(_forms(message)) != nplurals)
        ):
            missing.append(english.id)
    assert not missing, (
        f"{language}: {len(missing)} messages are not translated "
        f"(run `python scripts/i18n.py`, then translate them):\n{_short(missing)}"
    )


BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Direction marks and isolates: the renderer adds those a line needs (``directed``)."""


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_carry_no_direction_controls(language: str) -> None:
    marked = [
        message.id
        for message in _messages(_catalog(language))
        if any(BIDI_CONTROLS.search(form) for form in _forms(message) if form)
    ]
    assert not marked, f"{language}: invisible direction controls in:\n{_short(marked)}"


def _scripts(word: str) -> set[str]:
    """The scripts of a word's letters, by their Unicode names (LATIN, CYRILLIC, THAI...)."""
    return {unicodedata.name(char, "?").split()[0] for char in word if char.isalpha()}


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_word_mixes_latin_with_another_script(language: str) -> None:
    """A look-alike typed by mistake ("минатa" with a Latin "a") reads right, but a search
    does not find the word, nor does a screen reader read it as the word it looks like."""
    mixed = [
        f"{word!r} in {message.id!r}"
        for message in _messages(_catalog(language))
        for form in _forms(message)
        for word in re.findall(r"\w+", form or "")
        if len(scripts := _scripts(word)) > 1 and "LATIN" in scripts
    ]
    assert not mixed, f"{language}: words mixing Latin letters with another script:\n" + "\n".join(
        mixed
    )


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_fuzzy_entries(language: str) -> None:
    catalog = _catalog(language)
    assert not catalog.fuzzy, f"{language}: the catalog header is marked fuzzy"
    fuzzy = [message.id for message in _messages(catalog) if message.fuzzy]
    assert not fuzzy, f"{language}: fuzzy entries (check, then drop the flag):\n{_short(fuzzy)}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_keep_placeholders_tags_and_commands(language: str) -> None:
    problems = []
    for message in _messages(_catalog(language)):
        english = _english(message)
        for pattern, what in ((PLACEHOLDER, "placeholders"), (TAG, "HTML tags")):
            expected = Counter(pattern.findall(english[-1]))
            assert all(Counter(pattern.findall(text)) == expected for text in english)
            for form in _forms(message):
                if form and Counter(pattern.findall(form)) != expected:
                    problems.append((what, english[0], form))
        commands = set(COMMAND.findall(english[0]))
        for form in _forms(message):
            if form and set(COMMAND.findall(form)) != commands:
                problems.append(("commands", english[0], form))
    assert not problems, f"{language}: translations that differ from the English:\n" + _short(
        problems
    )


@pytest.mark.parametrize("language", TRANSLATED)
def test_plural_forms_follow_the_language(language: str) -> None:
    nplurals, form_of = PLURAL_RULES[language]
    catalog = _catalog(language)
    assert catalog.num_plurals == nplurals
    translations = _compiled(language)
    plurals = [message for message in _messages(catalog) if message.pluralizable]
    assert plurals
    for message in plurals:
        singular, plural = _english(message)
        for count in SAMPLE_COUNTS:
            expected = _forms(message)[form_of(count)]
            assert translations.ngettext(singular, plural, count) == expected, (language, count)


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_install_compiled_the_catalogs(language: str) -> None:
    """The .mo next to each .po (built by `pip install`) says what the .po says."""
    mo_path = LOCALE_DIR / language / "LC_MESSAGES" / "telesnap.mo"
    hint = "run `pip install -e .` or `python scripts/i18n.py compile`"
    assert mo_path.exists(), f"{mo_path} is missing: {hint}"
    with mo_path.open("rb") as file:
        installed = gettext.GNUTranslations(file)
    expected = _compiled(language)
    assert _messages_of(installed) == _messages_of(expected), f"{mo_path} is out of date: {hint}"
    assert translator(language).gettext("Flip") == expected.gettext("Flip") != "Flip"


def _messages_of(translations: gettext.GNUTranslations) -> dict[Any, str]:
    """The translated messages, without the header (it names the Babel that compiled it)."""
    catalog: dict[Any, str] = translations._catalog  # type: ignore[attr-defined]
    return {key: text for key, text in catalog.items() if key != ""}


def test_english_has_no_catalog_and_unknown_languages_fall_back() -> None:
    assert language_of_translations(translator("en")) == "en"
    assert translator("de").gettext("Flip") == "Flip"
    assert translator("es-MX").gettext("Flip") == translator("es").gettext("Flip")
    assert [language_of_translations(translator(language)) for language in TRANSLATED] == (
        TRANSLATED
    )


def test_every_part_of_the_bot_offers_the_same_languages() -> None:
    language_setting = next(spec for spec in SPECS if spec.name == "language")
    catalogs = sorted(path.name for path in LOCALE_DIR.iterdir() if path.is_dir())
    assert language_setting.choices == LANGUAGES
    assert set(LANGUAGE_NAMES) == set(LANGUAGES)
    assert list(_load_i18n_script().TRANSLATED) == TRANSLATED
    assert catalogs == sorted(TRANSLATED)


# -- right to left --------------------------------------------------------------------


def _table(pot: bool = True) -> TableView:
    players = tuple(
        PlayerView(
            seat=seat,
            user_id=100 + seat,
            name=name,
            top=parse_card(card) if card else None,
            face_down=down,
            face_up=up,
            status=status,
            is_turn=seat == 1,
        )
        for seat, (name, card, down, up, status) in enumerate(
            [
                ("Ann", "10♥", 12, 3, SeatStatus.ACTIVE),
                ("محمد", "Q♦", 9, 1, SeatStatus.ACTIVE),
                ("Bob <3", None, 0, 0, SeatStatus.OUT),
            ]
        )
    )
    return TableView(
        game_id=7,
        board_version=3,
        players=players,
        pot_top=parse_card("7♣") if pot else None,
        pot_size=4 if pot else 0,
        flips=20,
        is_race_open=False,
        winners=None,
        end_reason=None,
    )


def _visible(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text)


def _first_strong(line: str) -> str | None:
    """The bidi class deciding a line's direction (isolated runs are skipped, as in UAX #9)."""
    depth = 0
    for char in line:
        if char == FSI:
            depth += 1
        elif char == PDI:
            depth = max(0, depth - 1)
        elif depth == 0 and unicodedata.bidirectional(char) in ("L", "R", "AL"):
            return unicodedata.bidirectional(char)
    return None


def test_the_english_table_isolates_only_the_arabic_name() -> None:
    text = render_table(_table(), translator("en"))
    arabic = f"{FSI}محمد{PDI}"
    assert text.splitlines() == [
        "<b>Ann</b>: 10♥ · 12 face-down · 3 face-up",
        f"▶ <b>{arabic}</b>: Q♦ · 9 face-down · 1 face-up",
        "<s>Bob &lt;3</s>: out",
        "Snap Pot: 7♣ (4 cards)",
        f"Turn: <b>{arabic}</b>",
    ]
    board = compose_board(["x"], _table(), translator("en"))
    assert RLM not in board
    assert board.count(FSI) == board.count(PDI) == 2


def test_the_arabic_table_reads_right_to_left() -> None:
    tr = translator("ar")
    assert is_rtl(tr)
    event = tr.gettext("{name} flips {card}").format(
        name=f"<b>{isolate('Ann', tr)}</b>", card=isolate("10♥", tr)
    )
    text = compose_board([event], _table(), tr)
    lines = [line for line in text.splitlines() if line]
    assert len(lines) == 6
    for line in lines:
        # Each line is marked right-to-left, and would be even without the mark.
        assert line.startswith(RLM)
        assert _first_strong(_visible(line[1:])) in ("R", "AL"), line
        assert "face-down" not in line
        assert "Turn" not in line
    # Latin names and cards are isolated runs: "10♥" and "Ann" keep their own order.
    for run in ("Ann", "Bob &lt;3", "10♥", "Q♦", "7♣"):
        assert f"{FSI}{run}{PDI}" in text, run
    # An Arabic name reads right in an Arabic line as it is.
    assert f"{FSI}محمد" not in text
    assert text.count("<b>محمد</b>") == 2
    assert "◀ " in text
    assert "▶" not in text
    # Nothing else changed: without the marks, it is the Arabic text of the same table.
    plain = text.replace(FSI, "").replace(PDI, "").replace(RLM, "")
    assert "Ann</b>: 10♥ · 12 " in plain
    pot = tr.ngettext("Snap Pot: {card} ({count} card)", "Snap Pot: {card} ({count} cards)", 4)
    assert pot.format(card="7♣", count=4) in plain


def test_the_arabic_lobby_is_right_to_left() -> None:
    tr = translator("ar")
    lobby = LobbyView(game_id=7, creator_id=1, players=((1, "Ann"), (2, "Bo")), status="lobby")
    text = render_lobby(lobby, tr)
    assert all(line.startswith(RLM) for line in text.splitlines() if line)
    assert f"• {FSI}Ann{PDI}" in text


@pytest.mark.parametrize("language", ["mk", "sw", "es", "th"])
def test_left_to_right_translations_isolate_names_only(language: str) -> None:
    tr = translator(language)
    text = render_table(_table(), tr)
    assert RLM not in text
    assert "▶ " in text
    assert f"<b>{FSI}محمد{PDI}</b>" in text
    assert directed("a\nb", tr) == "a\nb"
    assert isolate("x", tr) == "x"
    assert isolate("10♥", tr) == "10♥"


# -- /rules and the menu --------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_full_rules_in_every_language(language: str) -> None:
    tr = translator(language)
    text = full_rules(tr)
    assert len(text) < 4096
    assert text.count("<b>") == text.count("</b>") >= 12
    paragraphs = text.split("\n\n")
    english = full_rules(translator("en")).split("\n\n")
    assert len(paragraphs) == len(english)
    if language != DEFAULT_LANGUAGE:
        assert all(
            mine.strip(RLM) != theirs for mine, theirs in zip(paragraphs, english, strict=True)
        )
        assert "7♠" in text
        assert "7♥" in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_menu_command_has_a_short_description(language: str) -> None:
    descriptions = command_descriptions(translator(language))
    assert set(menu_commands()) <= set(descriptions)
    assert all(1 <= len(text) <= 256 for text in descriptions.values())
    if language != DEFAULT_LANGUAGE:
        assert descriptions["flip"] != "Flip your card"


async def test_the_menu_is_published_in_every_language() -> None:
    async with running_emulator() as running, Bot(running.token, base_url=running.base_url) as bot:
        await publish_commands(SimpleNamespace(bot=bot))  # type: ignore[arg-type]
        default = await bot.get_my_commands()
        assert [command.command for command in default] == list(menu_commands())
        assert default[0].description == "What this bot does"
        for language in TRANSLATED:
            commands = await bot.get_my_commands(language_code=language)
            expected = command_descriptions(translator(language))
            assert {c.command: c.description for c in commands} == {
                command: expected[command] for command in menu_commands()
            }
        assert (await bot.get_my_commands(language_code="de")) == ()


async def test_a_private_chat_menu_lists_only_what_a_private_chat_answers() -> None:
    async with running_emulator() as running, Bot(running.token, base_url=running.base_url) as bot:
        await publish_commands(SimpleNamespace(bot=bot))  # type: ignore[arg-type]
        for language in (DEFAULT_LANGUAGE, *TRANSLATED):
            private = await bot.get_my_commands(
                scope=BotCommandScopeAllPrivateChats(),
                language_code=None if language == DEFAULT_LANGUAGE else language,
            )
            listed = [command.command for command in private]
            assert listed == [c for c in menu_commands() if c in PRIVATE_CHAT_COMMANDS]
            assert "newgame" not in listed
            assert "history" not in listed
