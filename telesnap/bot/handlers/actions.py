"""What a command and a button both do (join, leave, start, flip, call), done once.

Commands (:mod:`.commands`) and buttons (:mod:`.buttons`) differ only in how they read a
request and answer it; what the chat sees of a change, the change wrote to the outbox.
"""

from __future__ import annotations

import gettext
from dataclasses import dataclass

from telegram import InlineKeyboardMarkup, Message

from ...game import CallKind, CallVerdict
from ...services.play.managers import AdminCheck
from ...services.types import Actor, Place, Reason, Receipt, Refused
from ...services.views import CallOutcome, PlayOutcome
from ..referee.races import JoinedCall, Waiter
from ..render.i18n import language_of
from .context import admin_check
from .runtime import Answerer, Runtime


@dataclass(frozen=True, slots=True)
class Request:
    """A command or a press of ours, read from its update: who, where and when."""

    runtime: Runtime
    message: Message
    """The command, or the message whose button was pressed."""
    place: Place
    actor: Actor
    receipt: Receipt

    def translations(self) -> gettext.NullTranslations:
        """The translations of the chat's language (the actor's, in a chat with none yet)."""
        return self.runtime.translations(self.place, self.actor.language_code)

    @property
    def answer(self) -> Answerer:
        """Answers to the actor that change nothing, in :meth:`translations`, quoting them."""
        tr, quoted = self.translations(), self.message.message_id
        return Answerer(self.runtime, self.place, self.actor.user_id, tr, quoted)

    def reply(self, text: str, reply_markup: InlineKeyboardMarkup | None = None) -> None:
        """Answer with a message that replies to :attr:`message` (if the gate lets it go)."""
        self.answer.say(text, reply_markup)

    def is_admin(self) -> AdminCheck:
        """Asks Telegram whether the actor is one of the chat's admins, when awaited."""
        return admin_check(self.runtime.bot, self.place, self.actor)


async def join(request: Request, game_id: int | None = None) -> None:
    """Join the lobby (the one of ``game_id``, when a button names it)."""
    await request.runtime.lobby.join(request.place, request.actor, request.receipt, game_id)


async def leave(request: Request, game_id: int | None = None) -> None:
    """Leave the lobby or the running game."""
    await request.runtime.lobby.leave(request.place, request.actor, request.receipt, game_id)


async def start(request: Request, game_id: int | None = None) -> None:
    """Deal the cards (the game's creator or an admin)."""
    await request.runtime.lobby.start(
        request.place,
        request.actor,
        is_admin=request.is_admin(),
        receipt=request.receipt,
        game_id=game_id,
    )


async def flip(
    request: Request, version: int | None = None, game_id: int | None = None
) -> PlayOutcome:
    """Flip; a flip that arrives while a race is collecting waits until it is decided.

    A Flip pressed during a race was pressed on the current board, so it acts on the board the race
    left behind (if nothing else changed the game), even when handled after the decision.
    """
    runtime, place, actor, receipt = request.runtime, request.place, request.actor, request.receipt
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
            after_race = runtime.referee.board_after_race(place, version, receipt.stamp_ns)
            if after_race is None:
                raise
        else:
            raise
    if version is not None and after_race is not None:
        version = after_race
    return await runtime.play.flip(place, actor, receipt, version, game_id)


async def call(
    request: Request,
    kind: CallKind,
    *,
    version: int | None = None,
    game_id: int | None = None,
    query_id: str | None = None,
) -> CallOutcome:
    """Call Snap! or Snap Pot!: a correct call enters its race (a wrong one's board is written).

    A press (``query_id``; a command has none) is answered when its race is decided.
    """
    runtime, place, actor, receipt = request.runtime, request.place, request.actor, request.receipt
    outcome = await runtime.play.call(place, actor, kind, receipt, version, game_id)
    if (
        outcome.verdict is CallVerdict.PENDING
        and outcome.race_id is not None
        and outcome.race_deadline_ns is not None
    ):
        table = outcome.play.table
        joined = JoinedCall(
            outcome.race_id, table.game_id, outcome.race_deadline_ns, table.board_version
        )
        language = language_of(actor.language_code)
        waiter = (
            Waiter(query_id, actor.user_id, language, receipt.stamp_ns)
            if query_id is not None
            else None
        )
        runtime.referee.call_joined(place, joined, waiter)
    return outcome
