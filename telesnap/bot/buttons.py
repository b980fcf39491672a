"""Button presses: check that a press is authentic, current and ours, then act."""

from __future__ import annotations

import logging

from telegram import CallbackQuery, Message, Update
from telegram.ext import ContextTypes

from ..game import CallKind, CallVerdict
from ..services.types import Actor, Place, Reason, Receipt, Refused
from .callbacks import Action, ButtonPress
from .context import actor_of, as_manager, place_of_update
from .handlers import after_call, flip_after_race, show_result
from .i18n import language_of, translator
from .runtime import Runtime, runtime_of
from .settings_handlers import settings_button
from .texts import refusal_text, verdict_toast, wrong_call_toast
from .toasts import answer_toast

logger = logging.getLogger(__name__)
Context = ContextTypes.DEFAULT_TYPE


async def answer_press(query: CallbackQuery, text: str) -> None:
    """Answer a press with a toast, retried while it can be (see :mod:`.toasts`)."""
    await answer_toast(query.get_bot(), query.id, text)


async def on_button(update: Update, context: Context) -> None:
    """A press on one of our buttons: check it is authentic, current and ours, then act."""
    runtime = runtime_of(context)
    query = update.callback_query
    if query is None:
        return
    receipt = runtime.book.receipt_for(update)
    actor = actor_of(query.from_user)
    tr = translator(language_of(query.from_user.language_code))
    place = place_of_update(update)
    press = runtime.signer.decode(query.data)
    try:
        if press is None or place is None or not isinstance(query.message, Message):
            raise Refused(Reason.BAD_BUTTON)
        await runtime.remember_language(place)
        if press.action is Action.SETTINGS:
            toast: str | None = await settings_button(runtime, press, place, actor, query.message)
        else:
            toast = await _run_button(runtime, press, place, actor, receipt, query.id)
        if toast is not None:
            await answer_press(query, toast)
    except Refused as refused:
        # A redelivered press was answered the first time round.
        if refused.reason is not Reason.DUPLICATE_UPDATE:
            await answer_press(query, refusal_text(refused, tr))
    finally:
        runtime.book.finished(update)


async def _run_button(
    runtime: Runtime,
    press: ButtonPress,
    place: Place,
    actor: Actor,
    receipt: Receipt,
    query_id: str,
) -> str | None:
    """Act on a press; return the toast, or None when the answer comes later (a race)."""
    tr = translator(language_of(actor.language_code))
    lobby, game_id = runtime.lobby, press.game_id
    if press.action is Action.JOIN:
        runtime.show_lobby(place, await lobby.join(place, actor, receipt, game_id))
        return tr.gettext("You joined the game.")
    if press.action is Action.LEAVE:
        show_result(runtime, place, await lobby.leave(place, actor, receipt, game_id))
        return tr.gettext("You left the game.")
    if press.action is Action.START:
        started = await as_manager(
            runtime.bot,
            place,
            actor,
            lambda admin: lobby.start(
                place, actor, is_admin=admin, receipt=receipt, game_id=game_id
            ),
        )
        runtime.show_lobby(place, started.lobby)
        runtime.show_play(place, started.play)
        return tr.gettext("The cards are dealt!")
    if press.action is Action.FLIP:
        outcome = await flip_after_race(runtime, place, actor, receipt, press.version, game_id)
        runtime.show_play(place, outcome)
        return ""
    kind = CallKind.SNAP if press.action is Action.SNAP else CallKind.SNAP_POT
    called = await runtime.play.call(place, actor, kind, receipt, press.version, game_id)
    after_call(runtime, place, called, query_id, actor, receipt.monotonic_ns)
    if called.verdict is CallVerdict.PENDING:
        return None
    if called.verdict is CallVerdict.WRONG:
        return wrong_call_toast(any(op.kind == "penalty_paid" for op in called.play.operations), tr)
    return verdict_toast(called.verdict, called.behind_ms, tr)


async def on_unknown_button(update: Update, context: Context) -> None:
    """A press whose data is not one of ours (forged, or from an older bot)."""
    query = update.callback_query
    runtime = runtime_of(context)
    try:
        if query is not None:
            tr = translator(language_of(query.from_user.language_code))
            await answer_press(query, refusal_text(Refused(Reason.BAD_BUTTON), tr))
    finally:
        runtime.book.finished(update)
