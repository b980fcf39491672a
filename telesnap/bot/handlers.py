"""The commands: thin handlers that call the services and show the result."""

from __future__ import annotations

import logging

from telegram import Message, Update
from telegram.ext import ContextTypes

from ..game import CallKind, CallVerdict
from ..services.types import Actor, Place, Reason, Receipt, Refused
from ..services.views import CallOutcome, LobbyView, PlayOutcome
from .context import actor_of, as_manager, command_arguments, place_of_update
from .i18n import language_of, translator
from .races import JoinedCall, Waiter
from .render import name
from .runtime import Runtime, runtime_of
from .settings_handlers import settings_command
from .texts import help_text, refusal_text, rules_text, verdict_toast

logger = logging.getLogger(__name__)
Context = ContextTypes.DEFAULT_TYPE
_NO_ARGUMENTS = ("newgame", "join", "leave", "startgame", "endgame", "flip", "snap", "snappot")


def show_result(runtime: Runtime, place: Place, result: LobbyView | PlayOutcome | None) -> None:
    """Show a lobby or a table, whichever an action returned."""
    if isinstance(result, LobbyView):
        runtime.show_lobby(place, result)
    elif isinstance(result, PlayOutcome):
        runtime.show_play(place, result)


async def on_command(update: Update, context: Context) -> None:
    """Every command of ours: check it, run it, and answer a refusal with a short reply."""
    runtime = runtime_of(context)
    message = update.effective_message
    user = update.effective_user
    if message is None or user is None or message.text is None:
        return
    place = place_of_update(update)
    receipt = runtime.book.receipt_for(update)
    actor = actor_of(user)
    command = message.text.split()[0][1:].split("@")[0].lower()
    tr = translator(language_of(user.language_code))
    try:
        if command in _NO_ARGUMENTS and command_arguments(message):
            runtime.say(
                place or _private(message),
                tr.gettext("/{command} takes no arguments.").format(command=command),
                message.message_id,
            )
            return
        assert place is not None
        await runtime.remember_language(place)
        await _run_command(runtime, command, message, place, actor, receipt)
    except Refused as refused:
        if refused.reason is not Reason.DUPLICATE_UPDATE and place is not None:
            runtime.say(place, refusal_text(refused, tr), message.message_id)
    finally:
        runtime.book.finished(update)


def _private(message: Message) -> Place:
    return Place(message.chat.id, 0, message.chat.type)


async def _run_command(
    runtime: Runtime, command: str, message: Message, place: Place, actor: Actor, receipt: Receipt
) -> None:
    tr = translator(runtime.language_for(place))
    lobby, play, bot = runtime.lobby, runtime.play, runtime.bot
    if command in ("start", "help"):
        runtime.say(place, help_text(tr))
    elif command == "rules":
        runtime.say(place, rules_text(tr))
    elif command == "newgame":
        opened = await lobby.open(place, actor, receipt)
        await runtime.settings.adopt_language(place, language_of(actor.language_code))
        runtime.forget_language(place)
        await runtime.remember_language(place)
        runtime.show_lobby(place, opened)
    elif command == "join":
        runtime.show_lobby(place, await lobby.join(place, actor, receipt))
    elif command == "leave":
        show_result(runtime, place, await lobby.leave(place, actor, receipt))
    elif command == "startgame":
        started = await as_manager(
            bot,
            place,
            actor,
            lambda admin: lobby.start(place, actor, is_admin=admin, receipt=receipt),
        )
        runtime.show_lobby(place, started.lobby)
        runtime.show_play(place, started.play)
    elif command == "endgame":
        ended = await as_manager(
            bot,
            place,
            actor,
            lambda admin: lobby.end(place, actor, is_admin=admin, receipt=receipt),
        )
        if ended is None:
            runtime.say(place, tr.gettext("The game was called off."))
        show_result(runtime, place, ended)
    elif command == "settings":
        await settings_command(runtime, message, place, actor)
    elif command == "kick":
        await _kick(runtime, message, place, actor, receipt)
    elif command == "flip":
        runtime.show_play(place, await flip_after_race(runtime, place, actor, receipt, None, None))
    elif command in ("snap", "snappot"):
        kind = CallKind.SNAP if command == "snap" else CallKind.SNAP_POT
        outcome = await play.call(place, actor, kind, receipt)
        after_call(runtime, place, outcome, None, actor)
        if outcome.verdict in (CallVerdict.TOO_LATE, CallVerdict.TOO_SLOW):
            runtime.say(
                place, verdict_toast(outcome.verdict, outcome.behind_ms, tr), message.message_id
            )


async def _kick(
    runtime: Runtime, message: Message, place: Place, actor: Actor, receipt: Receipt
) -> None:
    tr = translator(runtime.language_for(place))
    target = message.reply_to_message.from_user if message.reply_to_message else None
    if target is None or target.is_bot:
        runtime.say(
            place,
            tr.gettext("Reply with /kick to a message of the player you want to remove."),
            message.message_id,
        )
        return
    result = await as_manager(
        runtime.bot,
        place,
        actor,
        lambda admin: runtime.lobby.kick(place, actor, target.id, is_admin=admin, receipt=receipt),
    )
    show_result(runtime, place, result)


async def flip_after_race(
    runtime: Runtime,
    place: Place,
    actor: Actor,
    receipt: Receipt,
    version: int | None,
    game_id: int | None,
) -> PlayOutcome:
    """Flip; a flip that arrives while a race is collecting waits until it is decided.

    A Flip button pressed during a race was pressed on the board that was current,
    so it acts on the board the race left behind (if nothing else has changed the
    game since), also when it is handled only after the race was decided: the race
    does not make the press "old".
    """
    try:
        return await runtime.play.flip(place, actor, receipt, version, game_id)
    except Refused as refused:
        if refused.reason is Reason.RACE_OPEN:
            if not runtime.referee.is_deciding(place):
                # Opened by another worker, which may have stopped before deciding it.
                race = await runtime.races.open_race(place)
                if race is not None:
                    runtime.referee.adopt(race)
            after_race = await runtime.referee.wait_until_decided(place)
        elif refused.reason is Reason.OLD_BOARD and version is not None:
            after_race = runtime.referee.board_after_race(place, version, receipt.monotonic_ns)
            if after_race is None:
                raise
        else:
            raise
    if version is not None and after_race is not None:
        version = after_race
    return await runtime.play.flip(place, actor, receipt, version, game_id)


def after_call(
    runtime: Runtime,
    place: Place,
    outcome: CallOutcome,
    query_id: str | None,
    actor: Actor,
    received_ns: int | None = None,
) -> None:
    """Enter a correct call in its race (the answer comes later); show a wrong call.

    ``query_id`` and ``received_ns`` are the pressed button's query and receipt stamp.
    """
    if (
        outcome.verdict is CallVerdict.PENDING
        and outcome.race_id is not None
        and outcome.race_deadline_ns is not None
    ):
        table = outcome.play.table
        call = JoinedCall(
            outcome.race_id, table.game_id, outcome.race_deadline_ns, table.board_version
        )
        waiter = (
            Waiter(query_id, actor.user_id, language_of(actor.language_code), received_ns)
            if query_id is not None
            else None
        )
        runtime.referee.call_joined(place, call, waiter)
    if outcome.verdict is CallVerdict.WRONG:
        runtime.show_play(place, outcome.play)


async def on_unknown_command(update: Update, context: Context) -> None:
    """A command we do not have (addressed to us, or to nobody in particular)."""
    runtime = runtime_of(context)
    message = update.effective_message
    try:
        if message is None or message.text is None:
            return
        target = message.text.split()[0].partition("@")[2]
        if target and target.lower() != (context.bot.username or "").lower():
            return
        place = place_of_update(update)
        user = update.effective_user
        tr = translator(language_of(user.language_code if user else None))
        if place is not None:
            runtime.say(
                place,
                tr.gettext("I don't know {command}. /help lists what I can do.").format(
                    command=name(message.text.split()[0])
                ),
                message.message_id,
            )
    finally:
        runtime.book.finished(update)


async def forget_receipt(update: Update, context: Context) -> None:
    """Drop an update's receipt once every handler is done (also for updates none took)."""
    runtime_of(context).book.finished(update)
