"""``/settings`` and its inline-keyboard menu."""

from __future__ import annotations

import gettext

from telegram import Message

from ...services.settings import SPECS, GameSettings
from ...services.types import Actor, Place, Reason, Receipt, Refused
from ..render.callbacks import Action, ButtonPress, carries_button
from ..render.i18n import translator
from ..render.settings_menu import (
    BACK,
    OPEN,
    MenuSigner,
    choices_keyboard,
    choices_text,
    overview_keyboard,
    preset_text,
    settings_text,
)
from .context import admin_check, command_arguments
from .runtime import Runtime


async def _change(
    runtime: Runtime,
    place: Place,
    actor: Actor,
    setting: str,
    value: str,
    receipt: Receipt,
    announce_to: int | None = None,
) -> tuple[GameSettings, gettext.NullTranslations]:
    """Change a setting (admins only); the settings now, and the chat's language's translations.

    ``receipt``: the update that asks (marked processed with the change).
    ``announce_to``: the command to answer with the settings saved (a notice in the outbox).
    """
    is_admin = admin_check(runtime.bot, place, actor)
    changed = await runtime.settings.change(
        place, actor, setting, value, is_admin=is_admin, receipt=receipt, announce_to=announce_to
    )
    return changed, translator(await runtime.language(place))


async def settings_command(
    runtime: Runtime, message: Message, place: Place, actor: Actor, receipt: Receipt
) -> None:
    """``/settings``: the menu; ``/settings NAME VALUE``: change one (admins)."""
    words = command_arguments(message)
    if len(words) == 2:
        setting, value = words
        await _change(
            runtime, place, actor, setting, value, receipt, announce_to=message.message_id
        )
        return  # "Saved." and the settings are in the outbox
    tr = runtime.translations(place)
    if words:
        runtime.say(
            place,
            tr.gettext("Write /settings NAME VALUE, for example /settings tie_window 150."),
            message.message_id,
        )
        return
    current = await runtime.settings.show(place)
    keyboard = overview_keyboard(current, MenuSigner(runtime.signer, place.chat_id), tr)
    runtime.say(place, settings_text(current, tr), None, keyboard)


async def settings_button(
    runtime: Runtime,
    press: ButtonPress,
    place: Place,
    actor: Actor,
    message: Message,
    receipt: Receipt,
) -> str:
    """A press in the settings menu: open a setting, save a choice (admins), or go back.

    A press counts only on the menu that carries its button: a modified client can
    send a menu's data for a board or a lobby, which must stay what it is.
    """
    index, choice = press.game_id, press.version
    data = runtime.signer.encode(
        Action.SETTINGS, game_id=index, version=choice, chat_id=place.chat_id
    )
    if not carries_button(message.reply_markup, data):
        raise Refused(Reason.BAD_BUTTON)
    menu = MenuSigner(runtime.signer, place.chat_id)
    toast = ""
    if index < BACK and choice != OPEN:
        value = preset_text(index, choice)
        if value is None:
            raise Refused(Reason.BAD_BUTTON)
        current, tr = await _change(runtime, place, actor, SPECS[index].name, value, receipt)
        toast = tr.gettext("Saved.")
        index = BACK
    else:
        current = await runtime.settings.show(place)
        tr = runtime.translations(place)
    if index >= BACK:
        text, keyboard = settings_text(current, tr), overview_keyboard(current, menu, tr)
    else:
        text = choices_text(index, current, tr)
        keyboard = choices_keyboard(index, current, menu, tr)
    runtime.edit(place, message.message_id, text, keyboard)
    return toast
