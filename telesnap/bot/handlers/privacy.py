"""``/forgetme`` and ``/forgetchat``: erasing a person's or a chat's data, after a button.

The button is signed with what it erases (the person's id, or the chat's), so it works only for
that person, or an admin of that chat, and only in the chat it was sent to.
"""

from __future__ import annotations

import gettext
import re
from dataclasses import dataclass, field
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler

from ...services.privacy import ChatErasure, PersonErasure, PrivacyService
from ...services.types import Refused
from ...support.bounded import BoundedDict
from ..render.callbacks import Signer, carries_button
from ..render.i18n import language_of, translator
from ..render.texts import refusal_text
from .commands import posted_as_a_chat
from .context import actor_of, command_name, is_chat_admin, place_of_message
from .runtime import Answerer, Context, finishing, refuse_press, runtime_of

__all__ = [
    "PRIVACY_COMMANDS",
    "PrivacyButtonSigner",
    "register_privacy_handlers",
]

PRIVACY_COMMANDS = ("forgetme", "forgetchat")
ANSWERED_KEPT = 1024
PERSON = "u"
CHAT = "c"
PRIVACY_CALLBACK_PATTERN = r"^P[uc]:-?\d{1,20}:[A-Za-z0-9_-]{11}$"
_PATTERN = re.compile(PRIVACY_CALLBACK_PATTERN)


class PrivacyButtonSigner(Signer):
    """Signs a confirmation button with what it erases: ``P<kind>:<id>:<tag>``."""

    PURPOSE = b"telesnap-privacy-callback"

    def encode(self, kind: str, target: int) -> str:
        """The callback data of the button that erases ``target`` (a user or a chat)."""
        return self.signed(f"P{kind}:{target}")

    def decode(self, data: str | None) -> tuple[str, int] | None:
        """(kind, target) of an authentic button, or None."""
        if data is None or _PATTERN.fullmatch(data) is None:
            return None
        body = self.authentic_body(data)
        if body is None:
            return None
        kind, target = body.split(":")
        return kind[1], int(target)


@dataclass(eq=False)
class PrivacyBot:
    """What the privacy handlers share: the service and the buttons' signer."""

    service: PrivacyService
    signer: PrivacyButtonSigner
    answered: BoundedDict[tuple[int, int], None] = field(
        default_factory=lambda: BoundedDict(ANSWERED_KEPT)
    )
    """The questions (chat, message) whose erasure is done: a second tap erases nothing more and
    must not replace the first one's answer with its zeros."""

    @classmethod
    def for_token(cls, service: PrivacyService, token: str) -> PrivacyBot:
        """With a button signer keyed by the bot token."""
        return cls(service, PrivacyButtonSigner.for_token(token))


def register_privacy_handlers(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Add the commands and their confirmation buttons (before the generic handlers)."""
    application.add_handler(CommandHandler(list(PRIVACY_COMMANDS), on_privacy_command))
    application.add_handler(
        CallbackQueryHandler(on_privacy_button, pattern=PRIVACY_CALLBACK_PATTERN)
    )


def _keyboard(text: str, data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(text, callback_data=data)]])


@finishing
async def on_privacy_command(update: Update, context: Context) -> None:
    """/forgetme (anyone, for themselves) or /forgetchat (a chat's admins)."""
    message = update.effective_message
    user = update.effective_user
    runtime = runtime_of(context)
    privacy = runtime.privacy
    if message is None or message.text is None or user is None or privacy is None:
        return
    place = place_of_message(message)
    answer = await runtime.answering(place, user.id, user.language_code, message.message_id)
    tr = answer.tr
    if posted_as_a_chat(answer, message):
        return
    if command_name(message) == "forgetme":
        text = tr.gettext(
            "This erases what the bot keeps about you: your name and username, your "
            "figures and ratings in every chat. Your past games stay, with you shown as "
            "“a former player”. Only you can press the button."
        )
        button = _keyboard(tr.gettext("Erase my data"), privacy.signer.encode(PERSON, user.id))
    elif place.chat_type == "private":
        text = tr.gettext("/forgetchat erases a group's data: send it in the group.")
        button = None
    elif not await _answers_an_admin(answer):
        return
    else:
        text = tr.gettext(
            "This erases this chat's games, their figures and the chat's settings, for "
            "good. Only an admin of this chat can press the button."
        )
        button = _keyboard(
            tr.gettext("Erase this chat's data"), privacy.signer.encode(CHAT, place.chat_id)
        )
    answer.say(text, button)


@finishing
async def on_privacy_button(update: Update, context: Context) -> None:
    """A confirmation: erase, then say what went (in place of the question)."""
    query = update.callback_query
    if query is None:
        return
    runtime = runtime_of(context)
    privacy = runtime.privacy
    toast_tr = translator(language_of(query.from_user.language_code))
    button = None if privacy is None else privacy.signer.decode(query.data)
    message = query.message
    if (
        privacy is None
        or button is None
        or not isinstance(message, Message)
        or not carries_button(message.reply_markup, query.data)  # its question, not a board
    ):
        await refuse_press(update, runtime, toast_tr.gettext("This button is not valid."))
        return
    place = place_of_message(message)
    question = (place.chat_id, message.message_id)
    if question in privacy.answered:
        await refuse_press(update, runtime, toast_tr.gettext("This button is not valid."))
        return
    kind, target = button
    tr = translator(await runtime.language(place, query.from_user.language_code))
    if kind == PERSON:
        if target != query.from_user.id:
            await refuse_press(
                update, runtime, toast_tr.gettext("Only the person who asked can press this.")
            )
            return
        asker = actor_of(query.from_user)
        person = await privacy.service.forget_person(target, update.update_id, asker)
        done = person.done
        await query.answer()
        text = _person_text(person, tr)
    else:
        if target != place.chat_id:
            await refuse_press(update, runtime, toast_tr.gettext("This button is not valid."))
            return
        try:
            admin = await is_chat_admin(runtime.bot, place.chat_id, query.from_user.id)
        except Refused as unknown:  # Telegram could not say: nothing is erased, try again
            await query.answer(refusal_text(unknown, toast_tr))
            return
        if not admin:
            await refuse_press(
                update, runtime, toast_tr.gettext("Only the chat's admins can erase its data.")
            )
            return
        chat = await privacy.service.forget_chat(target, update.update_id)
        done = chat.done
        await query.answer()
        text = _chat_text(chat, tr)
    if done:
        privacy.answered[question] = None
        runtime.settings.languages.forget(target)  # a private chat's, or the chat's: erased
    runtime.edit(place, message.message_id, text, None, written_in=tr)


async def _answers_an_admin(answer: Answerer) -> bool:
    """Whether the asker is one of the chat's admins; if not, or if Telegram cannot say, say so."""
    try:
        if await is_chat_admin(answer.runtime.bot, answer.place.chat_id, answer.user_id):
            return True
        answer.say(answer.tr.gettext("Only the chat's admins can erase its data."))
    except Refused as unknown:
        answer.say(refusal_text(unknown, answer.tr))
    return False


def _person_text(erased: PersonErasure, tr: gettext.NullTranslations) -> str:
    if not erased.done:
        return tr.gettext(
            "You are in a game that is still on: leave it, then send /forgetme again."
        )
    return "\n".join(
        (
            tr.gettext("Your data is erased:"),
            "• " + tr.gettext("your name and username, everywhere the bot kept them;"),
            "• "
            + tr.ngettext(
                "{count} record of figures and your ratings;",
                "{count} records of figures and your ratings;",
                erased.figures,
            ).format(count=erased.figures),
            "• "
            + tr.ngettext(
                "{count} past game now shows you as “a former player”;",
                "{count} past games now show you as “a former player”;",
                erased.games,
            ).format(count=erased.games),
            "• "
            + tr.ngettext(
                "{count} stored message or update that named you.",
                "{count} stored messages or updates that named you.",
                erased.messages + erased.updates,
            ).format(count=erased.messages + erased.updates),
            tr.gettext("If you play again, the bot keeps your name again from then on."),
        )
    )


def _chat_text(erased: ChatErasure, tr: gettext.NullTranslations) -> str:
    if not erased.done:
        return tr.gettext("A game is still on here: end it with /endgame, then ask again.")
    return tr.ngettext(
        "This chat's data is erased: {count} game, its figures and the settings.",
        "This chat's data is erased: {count} games, their figures and the settings.",
        erased.games,
    ).format(count=erased.games)
