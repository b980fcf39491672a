"""The receipt book counts each sender's updates on their way, for the intake gate's caps."""

from __future__ import annotations

import datetime as dt

import pytest
from telegram import Chat, Message, Update, User

from telesnap.bot.ingress import receipts
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.render.callbacks import CallbackSigner

CHAT = Chat(-100, Chat.SUPERGROUP)
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def command(update_id: int, user_id: int, chat: Chat = CHAT) -> Update:
    user = User(user_id, f"user {user_id}", is_bot=False)
    return Update(update_id, message=Message(update_id, NOW, chat, from_user=user, text="/help"))


def book() -> ReceiptBook:
    return ReceiptBook(CallbackSigner(b"k" * 32))


def test_a_senders_updates_count_until_their_handlers_finish() -> None:
    receipts_ = book()
    updates = [command(update_id, 1) for update_id in range(1, 6)]
    receipts_.stamp([*updates, command(6, 2)])
    # Each is counted with those before it in the batch: the gate checks them in order.
    assert [receipts_.waiting_from(CHAT.id, 1, u.update_id) for u in updates] == [
        1,
        2,
        3,
        4,
        5,
    ]
    assert receipts_.waiting_from(CHAT.id, 2, 6) == 1
    receipts_.finished(updates[0])
    receipts_.handled_elsewhere(updates[1].update_id)
    assert receipts_.waiting_from(CHAT.id, 1, 5) == 3


def test_an_update_never_finished_here_stops_counting_after_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    receipts_ = book()
    receipts_.stamp([command(1, 1)])  # another worker took its topic, say
    later = receipts.time.time_ns() + int(receipts.WAITING_S * 1e9) + 1
    monkeypatch.setattr(receipts.time, "time_ns", lambda: later)
    assert receipts_.waiting_from(CHAT.id, 1, 1) == 0
    assert receipts_.held() == 1  # its arrival is kept for a handler all the same
