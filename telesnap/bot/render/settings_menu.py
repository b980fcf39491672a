"""``/settings``: the chat's settings as text, and an inline-keyboard menu to change them.

Everyone may look; only chat admins change anything. A private chat's menu lists only its
language, which its person changes. Each button is signed with its chat, and a press counts
only on the menu message that carries it (see :mod:`.callbacks`).
"""

from __future__ import annotations

import gettext
from dataclasses import dataclass
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from ...services.chat_settings import PRIVATE_CHAT_SETTINGS
from ...services.settings import SPECS, GameSettings, SettingSpec
from .boards import milliseconds
from .callbacks import Action, CallbackSigner
from .i18n import LRI, PDI, is_rtl

BACK = len(SPECS)  # the "setting" index of the back button
OPEN = 0  # the "choice" of a button that opens a setting's choices
LANGUAGE_NAMES = {
    "en": "English",
    "mk": "Македонски",
    "sw": "Kiswahili",
    "es": "Español",
    "ar": "العربية",
    "th": "ไทย",
}


def listed_settings(private: bool) -> list[tuple[int, SettingSpec]]:
    """The settings a menu lists, each with its index in :data:`SPECS` (its buttons' number)."""
    return [
        (index, spec)
        for index, spec in enumerate(SPECS)
        if not private or spec.name in PRIVATE_CHAT_SETTINGS
    ]


def setting_label(spec: SettingSpec, tr: gettext.NullTranslations) -> str:
    """The name of a setting, as players read it."""
    labels = {
        "tie_window": tr.gettext("Tie window"),
        "turn_timer": tr.gettext("Turn timer"),
        "when_away": tr.gettext("When away"),
        "afk_limit": tr.gettext("Absences before removal"),
        "match_mode": tr.gettext("Match"),
        "penalty": tr.gettext("Wrong-call penalty"),
        "flip_limit": tr.gettext("Flip limit"),
        "time_limit": tr.gettext("Time limit"),
        "lobby_expiry": tr.gettext("Lobby expires after"),
        "idle_limit": tr.gettext("Abandon when idle for"),
        "language": tr.gettext("Language"),
        "shared_stats": tr.gettext("Figures shared across chats"),
        "keep_after_removal": tr.gettext("Kept after the bot is removed"),
        "board_style": tr.gettext("Board"),
    }
    return labels[spec.name]


def _minutes(minutes: int, tr: gettext.NullTranslations) -> str:
    if minutes % 1440 == 0:
        days = minutes // 1440
        return tr.ngettext("{count} day", "{count} days", days).format(count=days)
    if minutes % 60 == 0:
        hours = minutes // 60
        return tr.ngettext("{count} hour", "{count} hours", hours).format(count=hours)
    return tr.ngettext("{count} minute", "{count} minutes", minutes).format(count=minutes)


def value_label(
    spec: SettingSpec, value: Any, tr: gettext.NullTranslations, *, private: bool = False
) -> str:
    """A setting's value, as players read it (only values the setting allows)."""
    if spec.name == "language":
        if value is None and private:
            # Translators: a private chat with no language chosen is written in the language
            # the person's Telegram app reports.
            return tr.gettext("automatic (your Telegram app's)")
        if value is None:
            # Translators: the chat has no language yet; it takes the language of whoever
            # opens its first game.
            return tr.gettext("automatic (the first opener's)")
        return LANGUAGE_NAMES.get(str(value), str(value))
    if value is None:
        return tr.gettext("off")
    if spec.kind == "switch":
        return tr.gettext("on") if value else tr.gettext("off")
    if spec.name == "tie_window":
        return milliseconds(int(value), tr)
    if spec.name == "turn_timer":
        if value % 60:
            return tr.ngettext("{count} second", "{count} seconds", value).format(count=value)
        return _minutes(value // 60, tr)
    if spec.name in ("time_limit", "lobby_expiry", "idle_limit"):
        return _minutes(int(value), tr)
    if spec.name == "keep_after_removal":
        return _minutes(int(value) * 1440, tr)
    choices = {
        "auto_flip": tr.gettext("flip for them"),
        "skip": tr.gettext("skip them"),
        "rank": tr.gettext("same rank"),
        "rank_and_colour": tr.gettext("same rank and colour"),
        "suit": tr.gettext("same suit"),
        # Translators: the board style where every flip is a message of its own.
        "messages": tr.gettext("a message per flip"),
        # Translators: the board style where the game is one message, edited as it plays.
        "live": tr.gettext("one live message"),
    }
    return choices.get(str(value), str(value))


def settings_text(
    settings: GameSettings, tr: gettext.NullTranslations, *, private: bool = False
) -> str:
    """Every setting the chat takes with its value, and how to change it by command."""
    if private:
        title = tr.gettext(
            "<b>Settings</b> of our private chat: the language I write to you in, here "
            "and in your /notify messages"
        )
    else:
        title = tr.gettext("<b>Settings</b> (the next game plays by these)")
    lines = [title]
    for _, spec in listed_settings(private):
        value = value_label(spec, settings.value_of(spec), tr, private=private)
        typed = f"(<code>{spec.name}</code>: {spec.allowed})"
        if is_rtl(tr):  # what is typed reads left to right, whole, in a right-to-left line
            typed = f"{LRI}{typed}{PDI}"
        lines.append(f"• {setting_label(spec, tr)}: <b>{value}</b> {typed}")
    lines.append("")
    if private:
        how = tr.gettext(
            "Press a button, or send {example}. A game's settings are set in its group."
        ).format(example="<code>/settings language es</code>")
    else:
        how = tr.gettext(
            "Admins: press a button, or send /settings NAME VALUE, e.g. {example}."
        ).format(example="<code>/settings tie_window 150</code>")
    lines.append(how)
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class MenuSigner:
    """Signs the buttons of one chat's settings menu."""

    signer: CallbackSigner
    chat_id: int

    def button(self, text: str, setting: int, choice: int) -> InlineKeyboardButton:
        """A menu button: open ``setting``, or save its ``choice``."""
        data = self.signer.encode(
            Action.SETTINGS, game_id=setting, version=choice, chat_id=self.chat_id
        )
        return InlineKeyboardButton(text, callback_data=data)


def overview_keyboard(
    settings: GameSettings,
    signer: MenuSigner,
    tr: gettext.NullTranslations,
    *,
    private: bool = False,
) -> InlineKeyboardMarkup:
    """One button per setting the chat takes, two per row."""
    buttons = [
        signer.button(
            f"{setting_label(spec, tr)}: "
            f"{value_label(spec, settings.value_of(spec), tr, private=private)}",
            index,
            OPEN,
        )
        for index, spec in listed_settings(private)
    ]
    return InlineKeyboardMarkup([buttons[i : i + 2] for i in range(0, len(buttons), 2)])


def choices_keyboard(
    index: int, settings: GameSettings, signer: MenuSigner, tr: gettext.NullTranslations
) -> InlineKeyboardMarkup:
    """The preset choices of one setting (the current one ticked), and a back button."""
    spec = SPECS[index]
    current = settings.value_of(spec)
    buttons = [
        signer.button(
            ("✓ " if preset == current else "") + value_label(spec, preset, tr),
            index,
            choice + 1,
        )
        for choice, preset in enumerate(spec.presets)
    ]
    rows = [buttons[i : i + 3] for i in range(0, len(buttons), 3)]
    rows.append([signer.button(tr.gettext("« Back"), BACK, OPEN)])
    return InlineKeyboardMarkup(rows)


def choices_text(
    index: int, settings: GameSettings, tr: gettext.NullTranslations, *, private: bool = False
) -> str:
    """The title of a setting's choices (a private chat's are its person's to choose)."""
    spec = SPECS[index]
    if private:
        title = tr.gettext("<b>{setting}</b>: now {value}. Choose:")
    else:
        title = tr.gettext("<b>{setting}</b>: now {value}. Choose (admins only):")
    value = value_label(spec, settings.value_of(spec), tr, private=private)
    return title.format(setting=setting_label(spec, tr), value=value)


def preset_text(index: int, choice: int) -> str | None:
    """The value to save for a choice button, as a person would type it; None if invalid."""
    if not 0 <= index < len(SPECS) or not 1 <= choice <= len(SPECS[index].presets):
        return None
    preset = SPECS[index].presets[choice - 1]
    if preset is None:
        return "off"
    if isinstance(preset, bool):
        return "on" if preset else "off"
    return str(preset)
