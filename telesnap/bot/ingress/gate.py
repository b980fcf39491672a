"""Who is heard: budgets per user and per chat, checked where updates enter.

One member of a public group can send hundreds of updates in seconds; each stored one costs
database work every other chat waits behind, each reply one of the chat's 20 messages a minute.
So every update passes :class:`IntakeGate` before anything is stored or spawned; a press turned
away still gets a toast, which costs none of the chat's messages. The budgets are wide enough
that no player in a fast game meets them. Each worker counts what it receives: behind a load
balancer that spreads a chat's updates, a member's budget is per worker.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

from telegram import Chat, Update

from ...services.types import Reason, Topic
from .budgets import Budget, MovingWindows

__all__ = ["Budget", "GateLimits", "IntakeGate", "Verdict"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GateLimits:
    """The budgets: hits over a moving window, and counts of updates on their way."""

    presses_per_user: Budget = Budget(40, 5.0)
    commands_per_user: Budget = Budget(20, 10.0)
    updates_per_chat: Budget = Budget(300, 10.0)
    waiting_per_user: int = 10
    """A user's updates on their way at once (stamped, not yet handled): a person taps one
    button ten times in a burst, or a script sends a game's flips, then waits for the
    answers; a flood does not wait."""
    refusals_per_user: Budget = Budget(8, 10.0)
    """A user's refused updates: past it, all of theirs are turned away (a player meets a
    refusal now and then, a late press; a flood meets one per update)."""
    calls_per_topic: int = 24
    """Snap calls of one topic on their way at once (two per seat of a full table), past which
    a caller's further calls are turned away: each caller's first always gets in, so a crowd
    of non-players pressing Snap! cannot keep a player's call out."""
    replies_per_user: Budget = Budget(10, 30.0)
    """A user's answers that change nothing (a refusal, an unknown command, /help, /stats…):
    a few questions or mistakes in a row are each answered; a flood of them is not."""
    replies_per_chat: Budget = Budget(20, 60.0)
    """The same answers, all members of a chat together: no more than a group may be sent in
    a minute, so a crowd cannot queue up answers for longer (the boards go between them)."""


class Verdict(enum.Enum):
    """What becomes of an update at the gate."""

    ADMIT = "admit"
    """Stored and handled."""
    ANSWER = "answer"
    """A press turned away (its sender's budget is spent): answered with a toast, not stored."""
    BUSY = "busy"
    """A press turned away because a crowd floods its chat: answered so, not stored."""
    COOL_DOWN = "cool_down"
    """A press of a sender whose updates keep being refused: answered so, not stored."""
    DROP = "drop"
    """A message turned away: not stored, no reply."""


MET_IN_PLAY = frozenset(
    {
        Reason.NOT_YOUR_TURN,
        Reason.RACE_OPEN,
        Reason.ALREADY_CALLED,
        Reason.REPEATED_PRESS,
        Reason.OLD_BOARD,
        Reason.PLAYER_OUT,
        Reason.GAME_OVER,
    }
)
"""Refusals a player meets while playing (a press a moment early or late, a board an
edit replaced, a button of the game just ended): not counted against them."""

CallsInFlight = Callable[[Topic, int], tuple[int, int]]
"""How many Snap calls of a topic are on their way, all and a user's (this one included):
(topic, user_id) -> (calls, the user's)."""

WaitingFrom = Callable[[int, int, int], int]
"""How many of a user's updates in a chat, up to an update, are on their way:
(chat_id, user_id, update_id) -> count."""

PlaysIn = Callable[[int, Topic, int], bool]
"""Whether a user plays in a topic's running game, as this process knows it:
(game_id, topic, user_id) -> bool."""


class IntakeGate:
    """Checks each entering update against its sender's and its chat's budgets."""

    def __init__(
        self,
        limits: GateLimits | None = None,
        calls_in_flight: CallsInFlight = lambda topic, user_id: (0, 0),
        waiting_from: WaitingFrom = lambda chat_id, user_id, update_id: 0,
        plays_in: PlaysIn = lambda game_id, topic, user_id: False,
    ) -> None:
        """Check updates against ``limits``.

        ``plays_in``: a press on a board of a game its sender plays in passes the chat's budget,
        so a crowd flooding the chat cannot keep the players from playing.
        """
        self.limits = limits = limits or GateLimits()
        self._presses = MovingWindows(limits.presses_per_user)
        self._commands = MovingWindows(limits.commands_per_user)
        self._chat_updates = MovingWindows(limits.updates_per_chat)
        self._refusals = MovingWindows(limits.refusals_per_user)
        self._replies = MovingWindows(limits.replies_per_user)
        self._chat_replies = MovingWindows(limits.replies_per_chat)
        self._logged = MovingWindows(Budget(1, 5.0))
        self._calls_in_flight = calls_in_flight
        self._waiting_from = waiting_from
        self._plays_in = plays_in
        self.turned_away = 0
        """How many updates this gate has kept out (answered or dropped)."""

    def verdict(
        self,
        update: Update,
        topic: Topic | None = None,
        is_call: bool = False,
        game_id: int | None = None,
    ) -> Verdict:
        """Whether ``update`` (of ``topic``; a Snap call if ``is_call``) is let in.

        ``game_id``: the game whose button was pressed. It was stamped just before: the counts
        of calls and of the sender's updates include it.
        """
        user = update.effective_user
        chat = update.effective_chat
        if user is None or chat is None:
            return Verdict.ADMIT  # the bot's own membership changes and the like
        is_press = update.callback_query is not None
        refused = Verdict.ANSWER if is_press else Verdict.DROP
        message = update.effective_message
        if user.is_bot and not is_press and message is not None and message.sender_chat is None:
            # Telegram shows a bot no other bot's messages: one is forged, and no bot plays.
            return self._turned_away(Verdict.DROP, "is a bot", chat, user.id)
        sender = (chat.id, user.id)
        if not self._refusals.has_room(sender):
            cooled = Verdict.COOL_DOWN if is_press else Verdict.DROP
            return self._turned_away(cooled, "keeps being refused", chat, user.id)
        kind = "presses" if is_press else "commands"
        if self._waiting_from(chat.id, user.id, update.update_id) > self.limits.waiting_per_user:
            return self._turned_away(refused, "has too many on their way", chat, user.id)
        if not (self._presses if is_press else self._commands).hit(sender):
            return self._turned_away(refused, f"is over the {kind} budget", chat, user.id)
        # Who plays is asked only once the chat's budget is spent: not on every press.
        if not self._chat_updates.hit(chat.id) and not (
            game_id is not None and topic is not None and self._plays_in(game_id, topic, user.id)
        ):
            busy = Verdict.BUSY if is_press else Verdict.DROP
            return self._turned_away(busy, "the chat is over its budget", chat)
        if is_call and topic is not None:
            calls, callers = self._calls_in_flight(topic, user.id)
            if calls > self.limits.calls_per_topic and callers > 1:
                # only a caller's further calls: "too many presses" is theirs
                return self._turned_away(refused, "too many Snap calls on their way", chat)
        return Verdict.ADMIT

    def refused(self, chat_id: int, user_id: int, reason: Reason | None = None) -> None:
        """Count a refusal of this user's update (None: an unknown command, a bad one).

        Not :data:`MET_IN_PLAY`: a player pressing Flip early is still let in when their turn comes.
        """
        if reason not in MET_IN_PLAY:
            self._refusals.hit((chat_id, user_id))

    def may_reply(self, chat_id: int, user_id: int) -> bool:
        """Whether an answer to this user that changes nothing may be posted now (counted if so).

        A game's changes are always shown; these answers take what the sender's and the chat's
        reply budgets leave.
        """
        sender = (chat_id, user_id)
        if not (self._replies.has_room(sender) and self._chat_replies.has_room(chat_id)):
            return False
        return self._replies.hit(sender) and self._chat_replies.hit(chat_id)

    def _turned_away(
        self, verdict: Verdict, why: str, chat: Chat, user_id: int | None = None
    ) -> Verdict:
        self.turned_away += 1
        # Logged once per window and reason (whoever meets it), not once per update of a flood.
        if self._logged.hit((chat.id, why)):
            who = "" if user_id is None else f"user {user_id} "
            logger.info("chat %s: updates turned away at intake: %s%s", chat.id, who, why)
        return verdict
