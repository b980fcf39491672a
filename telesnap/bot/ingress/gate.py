"""Who is heard: budgets per user and per chat, checked where updates enter.

One member of a public group can send hundreds of commands and presses in a few
seconds. Each stored update costs database work, each reply costs one of the
chat's 20 messages a minute, and each Snap call holds a slot while it waits for
its topic. So before anything is stamped, stored or spawned, every update passes
:class:`IntakeGate`:

- a user's presses and a user's commands each have a budget (a moving window, from
  the ``limits`` library), and so has every chat for all of its updates;
- a topic holds at most :attr:`GateLimits.calls_per_topic` Snap calls on their way;
- a press over a budget is answered at once with a toast (a press is always
  answered; ``answerCallbackQuery`` costs none of the chat's messages) and is not
  stored; a command over a budget is dropped, and logged once per window;
- a user's refusals, unknown commands, /help and /rules are answered within
  :attr:`GateLimits.replies_per_user` (:meth:`IntakeGate.may_reply`): a few mistakes
  in a row each get their answer, a flood of them costs the chat a handful of
  messages, not one each.

The budgets are wide enough that no player in a fast game meets them (a press a
second each, with bursts, and a handful of commands at a game's start). Each
worker counts what it receives: behind a load balancer that spreads a chat's
updates, a member's budget is per worker.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from telegram import Bot, Chat, Update

from ...services.types import Topic
from ..render.i18n import language_of, translator
from ..render.toasts import answer_toast

__all__ = ["GateLimits", "IntakeGate", "Verdict", "toast_turned_away"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GateLimits:
    """The budgets, in the ``limits`` library's notation ("N per S seconds")."""

    presses_per_user: str = "40 per 5 seconds"
    commands_per_user: str = "20 per 10 seconds"
    updates_per_chat: str = "300 per 10 seconds"
    calls_per_topic: int = 24
    """Snap calls of one topic on their way at once (two per seat of a full table)."""
    replies_per_user: str = "5 per 10 seconds"
    """A user's refusals, unknown commands, /help and /rules: a few mistakes in a row are
    each answered; a flood of them is not."""


class Verdict(enum.Enum):
    """What becomes of an update at the gate."""

    ADMIT = "admit"
    """Stored and handled."""
    ANSWER = "answer"
    """A press over a budget: answered with a toast, not stored."""
    DROP = "drop"
    """A message over a budget: not stored, no reply."""


class IntakeGate:
    """Checks each entering update against its sender's and its chat's budgets."""

    def __init__(
        self,
        limits: GateLimits | None = None,
        calls_in_flight: Callable[[Topic], int] = lambda topic: 0,
    ) -> None:
        self.limits = limits or GateLimits()
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._presses = parse(self.limits.presses_per_user)
        self._commands = parse(self.limits.commands_per_user)
        self._chat_updates = parse(self.limits.updates_per_chat)
        self._replies = parse(self.limits.replies_per_user)
        self._logged = parse("1 per 5 seconds")
        self._calls_in_flight = calls_in_flight
        self.turned_away = 0
        """How many updates this gate has kept out (answered or dropped)."""

    def verdict(self, update: Update, topic: Topic | None = None, is_call: bool = False) -> Verdict:
        """Whether ``update`` (of ``topic``; a Snap call if ``is_call``) is let in.

        ``calls_in_flight`` counts a call that is being checked, stamped just before.
        """
        user = update.effective_user
        chat = update.effective_chat
        if user is None or chat is None:
            return Verdict.ADMIT  # the bot's own membership changes and the like
        is_press = update.callback_query is not None
        refused = Verdict.ANSWER if is_press else Verdict.DROP
        budget, kind = (self._presses, "presses") if is_press else (self._commands, "commands")
        if not self._hit(budget, kind, chat.id, user.id):
            return self._turned_away(refused, f"user {user.id} is over the {kind} budget", chat)
        if not self._hit(self._chat_updates, "chat", chat.id):
            return self._turned_away(refused, "the chat is over its budget", chat)
        crowded = topic is not None and self._calls_in_flight(topic) > self.limits.calls_per_topic
        if is_call and crowded:
            return self._turned_away(refused, "too many Snap calls on their way", chat)
        return Verdict.ADMIT

    def may_reply(self, chat_id: int, user_id: int) -> bool:
        """Whether a refusal or an unknown command of this user may be answered now."""
        return self._hit(self._replies, "reply", chat_id, user_id)

    def _hit(self, budget: RateLimitItem, *key: object) -> bool:
        return self._limiter.hit(budget, *map(str, key))

    def _turned_away(self, verdict: Verdict, why: str, chat: Chat) -> Verdict:
        self.turned_away += 1
        # Logged once per window and reason, not once per update of a flood.
        if self._hit(self._logged, "logged", chat.id, why):
            logger.info("chat %s: updates turned away at intake: %s", chat.id, why)
        return verdict


def toast_turned_away(
    bot: Bot, spawn: Callable[[Coroutine[Any, Any, Any]], None]
) -> Callable[[Update], None]:
    """What answers a press the gate turned away: a toast in the presser's language."""

    def answer(update: Update) -> None:
        query = update.callback_query
        if query is None:
            return
        tr = translator(language_of(query.from_user.language_code))
        text = tr.gettext("⏳ Too many presses: wait a few seconds, then try again.")
        spawn(answer_toast(bot, query.id, text))

    return answer
