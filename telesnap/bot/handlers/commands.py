"""The commands: one thin handler each, registered with python-telegram-bot's CommandHandler.

Every handler reads its update the same way (:func:`_handler`); what commands share with
buttons is in :mod:`.actions`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, NamedTuple

from telegram import Message, Update
from telegram.ext import BaseHandler, CommandHandler, filters

from ...game import CallKind, CallVerdict
from ...services.types import Reason, Refused
from ..render.boards import name
from ..render.i18n import isolate, language_of
from ..render.lobby import clock_time
from ..render.names import TYPED_WORD_LIMIT, shorten
from ..render.rules_text import full_rules
from ..render.texts import (
    help_text,
    played_in_groups,
    private_help_text,
    refusal_text,
    verdict_toast,
)
from . import actions
from .context import actor_of, command_arguments, place_of_message, replied_to
from .notify import lobby_link, notify_command, private_start_line
from .runtime import Answerer, Context, UpdateHandler, finishing, runtime_of
from .settings import settings_command

CommandBody = Callable[[actions.Request], Awaitable[None]]


class Command(NamedTuple):
    """How one command is handled, besides its body."""

    body: CommandBody
    takes_arguments: bool
    in_groups_only: bool = False
    """A game command: a private chat has no game, so there it is refused first of all."""
    read_only: bool = False
    """Answered even when posted as a chat: in a group it changes nothing and needs no seat."""


def _handler(name: str, command: Command) -> UpdateHandler:
    """The update handler of one command: read the request, run its body, answer a refusal."""

    @finishing
    async def handle(update: Update, context: Context) -> None:
        runtime = runtime_of(context)
        message = update.effective_message
        user = update.effective_user
        if message is None or user is None or message.text is None:
            return
        place = place_of_message(message)
        receipt = runtime.book.arrival_for(update).receipt
        answer = await runtime.answering(place, user.id, user.language_code, message.message_id)
        try:
            if command.in_groups_only and place.is_private:
                raise Refused(Reason.PRIVATE_CHAT)
            if not command.read_only and posted_as_a_chat(answer, message):
                return
            if not command.takes_arguments and command_arguments(message):
                text = answer.tr.gettext("/{command} takes no arguments.").format(command=name)
                refuse(answer, text)
                return
            await command.body(actions.Request(runtime, message, place, actor_of(user), receipt))
        except Refused as refused:
            if refused.reason is not Reason.DUPLICATE_UPDATE:
                refuse(answer, refusal_text(refused, answer.tr), refused.reason)

    handle.__name__ = handle.__qualname__ = f"on_{name}"
    return handle


def posted_as_a_chat(answer: Answerer, message: Message) -> bool:
    """Answer a message sent as the group (an anonymous admin) or a channel; whether it was.

    Telegram shows one stand-in user for all such senders: nobody's seat, figures or data.
    """
    if message.sender_chat is None:
        return False
    answer.say(
        answer.tr.gettext(
            "Post as yourself to play: a message sent on behalf of a group or a channel "
            "cannot take part in a game."
        )
    )
    return True


def refuse(answer: Answerer, text: str, reason: Reason | None = None) -> None:
    """Count a refused command; answer it unless its sender or the chat had their share."""
    answer.runtime.gate.refused(answer.place.chat_id, answer.user_id, reason)
    answer.say(text)


async def _help(request: actions.Request) -> None:
    request.answer.say(_help_for(request), quoting=False)


async def _start(request: actions.Request) -> None:
    """What the bot does; in the private chat, the bot may write there from now on."""
    alerts = await private_start_line(request) if request.place.is_private else None
    request.answer.say(_help_for(request, alerts), quoting=False)


def _help_for(request: actions.Request, alerts: str | None = None) -> str:
    """The help; in a private chat where Snap is played, ``alerts``, then what it answers there.

    A private chat has no game: it lists its own commands, and names a group's without
    offering them as playable there.
    """
    tr = request.translations()
    if not request.place.is_private:
        return help_text(tr)
    opening = [played_in_groups(tr), alerts, private_help_text(tr)]
    return "\n\n".join(paragraph for paragraph in opening if paragraph)


async def _rules(request: actions.Request) -> None:
    request.answer.say(full_rules(request.translations()), quoting=False)


async def _newgame(request: actions.Request) -> None:
    runtime, place, actor = request.runtime, request.place, request.actor
    language = language_of(actor.language_code)
    # The lobby and the alerts are written to the outbox: their commit wakes the senders.
    await runtime.lobby.open(
        place, actor, request.receipt, language=language, link=lobby_link(request.message)
    )


DEFAULT_EXTENSION_MIN = 10
"""How many minutes ``/extend`` without a number adds."""
LONGEST_EXTENSION_MIN = 1440
"""The most minutes one ``/extend`` may ask for (a day: the longest a lobby stays open)."""


async def _extend(request: actions.Request) -> None:
    """The lobby's creator or an admin keeps it open longer (the lobby message shows until when)."""
    runtime, place, actor = request.runtime, request.place, request.actor
    tr = request.translations()
    minutes = extension_minutes(command_arguments(request.message))
    if minutes is None:
        request.reply(
            tr.gettext(
                "/extend keeps the lobby open longer: /extend 15 adds 15 minutes "
                "(1 to {most}; {default} without a number)."
            ).format(most=LONGEST_EXTENSION_MIN, default=DEFAULT_EXTENSION_MIN)
        )
        return
    lobby = await runtime.lobby.extend(
        place,
        actor,
        timedelta(minutes=minutes),
        is_admin=request.is_admin(),
        receipt=request.receipt,
    )
    request.reply(
        tr.gettext("⏳ The lobby stays open until {time} UTC.").format(
            time=clock_time(lobby.closes_at or "")
        )
    )


def extension_minutes(words: list[str]) -> int | None:
    """The minutes ``/extend`` asks for (None: not a number it takes).

    >>> [extension_minutes(w) for w in ([], ["15"], ["0"], ["soon"], ["1441"])]
    [10, 15, None, None, None]
    """
    if not words:
        return DEFAULT_EXTENSION_MIN
    if len(words) != 1 or not words[0].isdecimal():
        return None
    minutes = int(words[0])
    return minutes if 1 <= minutes <= LONGEST_EXTENSION_MIN else None


async def _endgame(request: actions.Request) -> None:
    await request.runtime.lobby.end(
        request.place, request.actor, is_admin=request.is_admin(), receipt=request.receipt
    )


async def _kick(request: actions.Request) -> None:
    reply_to = replied_to(request.message)
    target = reply_to.from_user if reply_to else None
    if target is None or target.is_bot:
        request.reply(
            request.translations().gettext(
                "Reply with /kick to a message of the player you want to remove."
            )
        )
        return
    await request.runtime.lobby.kick(
        request.place,
        request.actor,
        target.id,
        is_admin=request.is_admin(),
        receipt=request.receipt,
    )


async def _flip(request: actions.Request) -> None:
    await actions.flip(request)


def _caller(kind: CallKind) -> CommandBody:
    async def call(request: actions.Request) -> None:
        outcome = await actions.call(request, kind)
        if outcome.verdict in (CallVerdict.TOO_LATE, CallVerdict.TOO_SLOW):
            request.reply(verdict_toast(outcome.verdict, outcome.behind_ms, request.translations()))

    return call


_COMMANDS: dict[str, Command] = {
    # in the order of the menu
    "start": Command(_start, takes_arguments=True, read_only=True),
    "help": Command(_help, takes_arguments=True, read_only=True),
    "rules": Command(_rules, takes_arguments=True, read_only=True),
    "newgame": Command(_newgame, takes_arguments=False, in_groups_only=True),
    "join": Command(actions.join, takes_arguments=False, in_groups_only=True),
    "leave": Command(actions.leave, takes_arguments=False, in_groups_only=True),
    "startgame": Command(actions.start, takes_arguments=False, in_groups_only=True),
    "endgame": Command(_endgame, takes_arguments=False, in_groups_only=True),
    "kick": Command(_kick, takes_arguments=True, in_groups_only=True),
    "extend": Command(_extend, takes_arguments=True, in_groups_only=True),
    "notify": Command(notify_command, takes_arguments=True),
    "flip": Command(_flip, takes_arguments=False, in_groups_only=True),
    "snap": Command(_caller(CallKind.SNAP), takes_arguments=False, in_groups_only=True),
    "snappot": Command(_caller(CallKind.SNAP_POT), takes_arguments=False, in_groups_only=True),
    "settings": Command(settings_command, takes_arguments=True),
}
COMMANDS = tuple(_COMMANDS)
"""The game's commands, in the order the menu lists them."""


def command_handlers() -> list[BaseHandler[Update, Any, None]]:
    """One CommandHandler per command of the game (new messages only: an edit is no command)."""
    return [
        CommandHandler(name, _handler(name, command), filters=filters.UpdateType.MESSAGE)
        for name, command in _COMMANDS.items()
    ]


@finishing
async def on_unknown_command(update: Update, context: Context) -> None:
    """A command we do not have (addressed to us, or to nobody in particular)."""
    message = update.effective_message
    if message is None or message.text is None:
        return
    target = message.text.split()[0].partition("@")[2]
    if target and target.lower() != (context.bot.username or "").lower():
        return
    user = update.effective_user
    if user is None:
        return
    place = place_of_message(message)
    answer = await runtime_of(context).answering(
        place, user.id, user.language_code, message.message_id
    )
    text = answer.tr.gettext("I don't know {command}. /help lists what I can do.").format(
        command=isolate(name(command_word(message.text)), answer.tr)
    )
    refuse(answer, text)


def command_word(text: str) -> str:
    """The command a message starts with, without the bot's name, cut to a command's length.

    >>> command_word("/dance@SnapBot now please")
    '/dance'
    """
    words = text.split(maxsplit=1)
    word = words[0].partition("@")[0] if words else text
    return shorten(word, TYPED_WORD_LIMIT)


async def forget_receipt(update: Update, context: Context) -> None:
    """Drop an update's receipt once every handler is done (also for updates none took)."""
    runtime_of(context).book.finished(update)
