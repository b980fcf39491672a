"""Button presses: one thin handler per action, registered with an anchored pattern each.

Every handler checks its press the same way (:func:`_handler`); what buttons share with
commands is in :mod:`.actions`.
"""

from __future__ import annotations

import gettext
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.ext import BaseHandler, CallbackQueryHandler

from ...game import CallKind, CallVerdict
from ...services.types import Reason, Receipt, Refused
from ..render.boards import plain_text
from ..render.callbacks import Action, ButtonPress, pattern_for
from ..render.i18n import language_of, translator
from ..render.texts import refusal_text, verdict_toast, wrong_call_toast
from ..render.toasts import answer_toast
from . import actions
from .context import actor_of, place_of_message
from .runtime import Context, UpdateHandler, finishing, refuse_press, runtime_of
from .settings import settings_button


async def answer_press(query: CallbackQuery, text: str, receipt: Receipt) -> None:
    """Answer a press with a toast, retried until shortly before it expires (:mod:`.toasts`)."""
    await answer_toast(query.get_bot(), query.id, text, received_ns=receipt.stamp_ns)


@dataclass(frozen=True, slots=True)
class ButtonRequest(actions.Request):
    """An authentic press on one of our messages: what, who, where and when."""

    query_id: str
    press: ButtonPress

    def translations(self) -> gettext.NullTranslations:
        """The translations of the presser's language (a toast is seen by them alone)."""
        return translator(language_of(self.actor.language_code))


ButtonBody = Callable[[ButtonRequest], Awaitable[str | None]]
"""Acts on a press; returns the toast, or None when the answer comes later (a race)."""


def _handler(body: ButtonBody) -> UpdateHandler:
    """The update handler of one action: check the press, run ``body``, answer with a toast."""

    @finishing
    async def handle(update: Update, context: Context) -> None:
        runtime = runtime_of(context)
        query = update.callback_query
        if query is None:
            return
        arrival = runtime.book.arrival_for(update)
        receipt, press = arrival.receipt, arrival.press
        actor = actor_of(query.from_user)
        tr = translator(language_of(query.from_user.language_code))
        try:
            message = query.message
            if press is None or not isinstance(message, Message):
                raise Refused(Reason.BAD_BUTTON)
            place = place_of_message(message)
            await runtime.language(place)
            request = ButtonRequest(runtime, message, place, actor, receipt, query.id, press)
            toast = await body(request)
            if toast is not None:
                await answer_press(query, toast, receipt)
        except Refused as refused:
            # A redelivered press was answered (and counted) the first time round.
            if refused.reason is not Reason.DUPLICATE_UPDATE:
                if update.effective_chat:
                    runtime.gate.refused(update.effective_chat.id, actor.user_id, refused.reason)
                await answer_press(query, plain_text(refusal_text(refused, tr)), receipt)

    handle.__name__ = handle.__qualname__ = f"on_{body.__name__.strip('_')}_button"
    return handle


async def _join(request: ButtonRequest) -> str:
    await actions.join(request, request.press.game_id)
    return request.translations().gettext("You joined the game.")


async def _leave(request: ButtonRequest) -> str:
    await actions.leave(request, request.press.game_id)
    return request.translations().gettext("You left the game.")


async def _start(request: ButtonRequest) -> str:
    await actions.start(request, request.press.game_id)
    return request.translations().gettext("The cards are dealt!")


async def _flip(request: ButtonRequest) -> str:
    await actions.flip(request, request.press.version, request.press.game_id)
    return ""


def _caller(kind: CallKind) -> ButtonBody:
    async def call(request: ButtonRequest) -> str | None:
        press = request.press
        called = await actions.call(
            request, kind, version=press.version, game_id=press.game_id, query_id=request.query_id
        )
        tr = request.translations()
        if called.verdict is CallVerdict.PENDING:
            return None
        if called.verdict is CallVerdict.WRONG:
            return wrong_call_toast(kind, called.penalised, tr)
        return verdict_toast(called.verdict, called.behind_ms, tr)

    call.__name__ = kind.name.lower()
    return call


async def _settings(request: ButtonRequest) -> str:
    return await settings_button(request, request.press)


_BODIES: dict[Action, ButtonBody] = {
    Action.JOIN: _join,
    Action.LEAVE: _leave,
    Action.START: _start,
    Action.FLIP: _flip,
    Action.SNAP: _caller(CallKind.SNAP),
    Action.SNAP_POT: _caller(CallKind.SNAP_POT),
    Action.SETTINGS: _settings,
}


def button_handlers() -> list[BaseHandler[Update, Any, None]]:
    """One CallbackQueryHandler per action, each listening to its action's anchored pattern."""
    return [
        CallbackQueryHandler(_handler(body), pattern=pattern_for(action))
        for action, body in _BODIES.items()
    ]


@finishing
async def on_unknown_button(update: Update, context: Context) -> None:
    """A press whose data is not one of ours (forged, or from an older bot)."""
    query = update.callback_query
    if query is not None:
        tr = translator(language_of(query.from_user.language_code))
        text = refusal_text(Refused(Reason.BAD_BUTTON), tr)
        await refuse_press(update, runtime_of(context), text)
