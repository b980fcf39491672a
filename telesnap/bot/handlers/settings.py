"""``/settings`` and its inline-keyboard menu (a private chat's lists only its language)."""

from __future__ import annotations

import gettext

from ...services.settings import SPECS, GameSettings
from ...services.types import Reason, Refused
from ..render.callbacks import Action, ButtonPress, carries_button
from ..render.i18n import language_of, translator
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
from .actions import Request
from .context import command_arguments


async def _change(
    request: Request, setting: str, value: str, announce_to: int | None = None
) -> tuple[GameSettings, gettext.NullTranslations]:
    """Change a setting (admins only); the settings now, and the translations to show them in.

    ``announce_to``: the command to answer with the settings saved (a notice in the outbox).
    """
    runtime, place = request.runtime, request.place
    changed = await runtime.settings.change(
        place,
        request.actor,
        setting,
        value,
        is_admin=request.is_admin(),
        receipt=request.receipt,
        announce_to=announce_to,
    )
    return changed, translator(await runtime.language(place, request.actor.language_code))


async def settings_command(request: Request) -> None:
    """``/settings``: the menu; ``/settings NAME VALUE``: change one (admins)."""
    runtime, place, message = request.runtime, request.place, request.message
    private = place.is_private
    words = command_arguments(message)
    if len(words) == 2:
        setting, value = words
        await _change(request, setting, value, announce_to=message.message_id)
        return  # "Saved." and the settings are in the outbox
    tr = request.translations()
    if words:
        if private:
            hint = tr.gettext("Write /settings language CODE, for example /settings language es.")
        else:
            hint = tr.gettext("Write /settings NAME VALUE, for example /settings tie_window 150.")
        request.reply(hint)
        return
    current = await runtime.settings.show(place)
    menu = MenuSigner(runtime.signer, place.chat_id)
    keyboard = overview_keyboard(current, menu, tr, private=private)
    request.answer.say(settings_text(current, tr, private=private), keyboard, quoting=False)


async def settings_button(request: Request, press: ButtonPress) -> str:
    """A press in the settings menu: open a setting, save a choice (admins), or go back.

    A press counts only on the menu that carries its button: a modified client can
    send a menu's data for a board or a lobby, which must stay what it is.
    """
    runtime, place, message = request.runtime, request.place, request.message
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
        current, tr = await _change(request, SPECS[index].name, value)
        # A toast is its presser's, in their app's language; a private chat's is theirs.
        toast_tr = tr if place.is_private else translator(language_of(request.actor.language_code))
        toast = toast_tr.gettext("Saved.")
        index = BACK
    else:
        current = await runtime.settings.show(place)
        tr = translator(await runtime.language(place, request.actor.language_code))  # the chat's
    private = place.is_private
    if index >= BACK:
        text = settings_text(current, tr, private=private)
        keyboard = overview_keyboard(current, menu, tr, private=private)
    else:
        text = choices_text(index, current, tr, private=private)
        keyboard = choices_keyboard(index, current, menu, tr)
    runtime.edit(place, message.message_id, text, keyboard, written_in=tr)
    return toast
