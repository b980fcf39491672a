"""The handlers count each refusal at the intake gate: a member who keeps being refused is
turned away there, before anything of theirs is stored again."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from telegram import CallbackQuery, Chat, Message, Update, User

from telesnap.bot.handlers.commands import on_unknown_command
from telesnap.bot.handlers.runtime import RUNTIME_KEY
from telesnap.bot.ingress.gate import Verdict

from .runtimes import wired_runtime

GROUP = Chat(-100, Chat.SUPERGROUP, title="Snap club")
MAL = User(7, "Mal", is_bot=False)
ANN = User(8, "Ann", is_bot=False)


def press_by(user: User) -> Update:
    message = Message(3, datetime.now(UTC), GROUP)
    query = CallbackQuery("q", user, "c", message=message, data="flip:1:2:x")
    return Update(50, callback_query=query)


async def test_unknown_commands_past_the_refusals_budget_turn_their_sender_away() -> None:
    runtime = wired_runtime()
    context = SimpleNamespace(
        bot_data={RUNTIME_KEY: runtime}, bot=SimpleNamespace(username="SnapBot")
    )
    budget = runtime.gate.limits.refusals_per_user.count
    for number in range(budget):
        assert runtime.gate.verdict(press_by(MAL)) is Verdict.ADMIT
        message = Message(number, datetime.now(UTC), GROUP, from_user=MAL, text="/frobnicate")
        await on_unknown_command(Update(number, message=message), context)  # type: ignore[arg-type]
    assert runtime.gate.verdict(press_by(MAL)) is Verdict.COOL_DOWN
    assert runtime.gate.verdict(press_by(ANN)) is Verdict.ADMIT
    await runtime.close()
