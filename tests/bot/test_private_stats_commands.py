"""/leaderboard, /history and /replay in a private chat: games are kept per group, all say so."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from telegram import Chat, Message, MessageEntity, Update, User

from telesnap.bot.handlers.runtime import RUNTIME_KEY
from telesnap.bot.handlers.stats import StatsBot, on_stats_command
from telesnap.services.types import Reason, Refused

from .runtimes import ChatBot, wired_runtime

ANN = User(7, "Ann", is_bot=False, language_code="en")
PRIVATE = Chat(ANN.id, Chat.PRIVATE, first_name="Ann")


class NoGamesHere:
    """The stats service of a private chat: it holds no game (as the real one answers)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def replay(self, chat_id: int, game_id: int) -> Any:
        self.calls.append("replay")
        raise Refused(Reason.NO_GAME, {"game_id": game_id})

    def __getattr__(self, name: str) -> Any:
        async def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append(name)

        return record


async def private_answer(text: str) -> tuple[str, list[str]]:
    """What the private chat is sent for ``text``, and what the stats service was asked."""
    service = NoGamesHere()
    bot = ChatBot()
    runtime = wired_runtime(bot=bot)
    runtime.stats = StatsBot.for_token(service, "123:secret")  # type: ignore[arg-type]
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime}, bot=bot)
    entity = MessageEntity(MessageEntity.BOT_COMMAND, 0, len(text.split()[0]))
    message = Message(9, datetime.now(UTC), PRIVATE, from_user=ANN, text=text, entities=[entity])
    await on_stats_command(Update(1, message=message), context)  # type: ignore[arg-type]
    await runtime.settle()
    await runtime.close()
    (said,) = bot.texts(PRIVATE.id)
    return said, service.calls


@pytest.mark.parametrize("text", ["/replay 1", "/replay 1 file"])
async def test_replay_in_a_private_chat_says_games_are_kept_per_group(text: str) -> None:
    said, calls = await private_answer(text)
    leaderboard, _ = await private_answer("/leaderboard")
    assert said == leaderboard.replace("/leaderboard", "/replay")
    assert said.startswith("🏆 Leaderboards and game history are kept per group")
    assert calls == [], "nothing is looked up: a private chat holds no game"
