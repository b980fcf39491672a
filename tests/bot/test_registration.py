"""Each command and each button action has a handler of its own, found by python-telegram-bot."""

from __future__ import annotations

import pytest
from telegram import CallbackQuery, Chat, Message, Update, User
from telegram.ext import CallbackQueryHandler, CommandHandler

from telesnap.bot.handlers.commands import COMMANDS
from telesnap.bot.ingress.application import build_application
from telesnap.bot.render.callbacks import Action, CallbackSigner

TOKEN = "123:secret"
SIGNER = CallbackSigner.for_token(TOKEN)
APPLICATION = build_application(TOKEN, "http://127.0.0.1:1")
USER = User(7, "Ada", is_bot=False)


def _handler_taking(update: Update) -> str:
    """The name of the handler python-telegram-bot runs for ``update`` (the first that takes it)."""
    return next(
        handler.callback.__name__
        for handler in APPLICATION.handlers[0]
        if handler.check_update(update) not in (None, False)
    )


def _press(data: str) -> Update:
    chat = Chat(-100, Chat.SUPERGROUP)
    message = Message(1, None, chat)  # type: ignore[arg-type]
    return Update(1, callback_query=CallbackQuery("q1", USER, "instance", message, data))


@pytest.mark.parametrize("action", list(Action))
def test_a_signed_press_is_taken_by_a_handler_of_its_action(action: Action) -> None:
    data = SIGNER.encode(action, game_id=4, version=2, chat_id=-100)
    assert _handler_taking(_press(data)) not in ("on_unknown_button", "on_stats_button")


def test_presses_of_different_actions_go_to_different_handlers() -> None:
    names = {
        _handler_taking(_press(SIGNER.encode(a, game_id=1, version=1, chat_id=-100)))
        for a in Action
    }
    assert len(names) == len(Action)


@pytest.mark.parametrize("data", ["j:1:1:tooshort", "z:1:1:abcdefghijk", "TB:x"])
def test_a_press_that_is_not_ours_goes_to_the_unknown_button_handler(data: str) -> None:
    assert _handler_taking(_press(data)) == "on_unknown_button"


def test_each_command_has_one_command_handler() -> None:
    commands = [
        handler.commands
        for handler in APPLICATION.handlers[0]
        if isinstance(handler, CommandHandler)
    ]
    ours = [names for names in commands if names & set(COMMANDS)]
    assert sorted(next(iter(names)) for names in ours) == sorted(COMMANDS)
    assert all(len(names) == 1 for names in ours)
    assert sum(isinstance(h, CallbackQueryHandler) for h in APPLICATION.handlers[0]) >= len(Action)
