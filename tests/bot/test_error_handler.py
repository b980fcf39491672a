"""The error handler answers a failed press once, in the presser's language, and never twice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from telegram import CallbackQuery, Chat, Message, Update, User

from telesnap.bot.handlers.errors import on_error
from telesnap.bot.handlers.runtime import RUNTIME_KEY
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.bot.render.toasts import AnsweredPresses

from .runtimes import wired_runtime

SIGNER = CallbackSigner.for_token("123:secret")


class AnsweringBot:
    """Records answers, and remembers answered presses as the application's bot does."""

    def __init__(self) -> None:
        self.answered_presses = AnsweredPresses()
        self.answers: list[tuple[str, str | None]] = []

    async def answer_callback_query(
        self, callback_query_id: str, text: str | None = None, **_: Any
    ) -> bool:
        self.answers.append((callback_query_id, text))
        self.answered_presses.add(callback_query_id)
        return True


@dataclass
class Context:
    bot: AnsweringBot
    error: Exception
    bot_data: dict[str, Any] = field(default_factory=dict)


def press(query_id: str, language: str) -> Update:
    user = User(id=7, first_name="Ann", is_bot=False, language_code=language)
    chat = Chat(id=-5, type=Chat.GROUP)
    message = Message(message_id=3, date=None, chat=chat)  # type: ignore[arg-type]
    query = CallbackQuery(query_id, user, chat_instance="c", data="f:1:1:x", message=message)
    return Update(update_id=11, callback_query=query)


def context_for(bot: AnsweringBot) -> Context:
    runtime = wired_runtime(bot=bot, signer=SIGNER)
    return Context(bot, RuntimeError("the database timed out"), {RUNTIME_KEY: runtime})


async def test_a_failed_press_gets_one_toast_in_the_pressers_language() -> None:
    bot = AnsweringBot()
    update = press("q1", "es")
    update.callback_query.set_bot(bot)  # type: ignore[union-attr, arg-type]
    await on_error(update, context_for(bot))  # type: ignore[arg-type]
    assert bot.answers == [("q1", "⚠️ Algo ha fallado por mi parte. Inténtalo de nuevo.")]


async def test_a_press_answered_before_the_failure_is_not_answered_again() -> None:
    bot = AnsweringBot()
    bot.answered_presses.add("q2")
    update = press("q2", "en")
    update.callback_query.set_bot(bot)  # type: ignore[union-attr, arg-type]
    await on_error(update, context_for(bot))  # type: ignore[arg-type]
    assert bot.answers == []


def test_the_answered_presses_are_bounded() -> None:
    answered = AnsweredPresses(limit=3)
    for n in range(10):
        answered.add(f"q{n}")
    assert [f"q{n}" in answered for n in range(10)] == [False] * 7 + [True] * 3
