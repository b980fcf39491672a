"""A press is decoded once, when it is stamped; its press travels with its receipt."""

from __future__ import annotations

import asyncio

from telegram import CallbackQuery, Chat, Message, Update, User

from telesnap.bot.application import ChatOrderedProcessor
from telesnap.bot.callbacks import Action, ButtonPress, CallbackSigner
from telesnap.bot.receipts import ReceiptBook

USER = User(7, "Ada", is_bot=False)


class CountingSigner(CallbackSigner):
    """A signer that counts how often callback data is decoded (each checks an HMAC)."""

    decoded = 0

    def decode(self, data: str | None) -> ButtonPress | None:
        self.decoded += 1
        return super().decode(data)


def press(update_id: int, data: str) -> Update:
    message = Message(1, None, Chat(-100, Chat.SUPERGROUP))  # type: ignore[arg-type]
    query = CallbackQuery(f"q{update_id}", USER, "instance", message, data)
    return Update(update_id, callback_query=query)


async def test_a_press_is_decoded_once_from_stamp_through_ordering_to_its_handler() -> None:
    signer = CountingSigner(b"secret")
    book = ReceiptBook(signer)
    update = press(1, signer.encode(Action.SNAP, game_id=3, version=5))
    book.stamp([update])
    handled = asyncio.Event()

    async def handler() -> None:
        handled.set()

    await ChatOrderedProcessor(book).process_update(update, handler())
    arrival = book.arrival_for(update)
    book.finished(update)
    assert handled.is_set()
    assert arrival.press == ButtonPress(Action.SNAP, 3, 5)
    assert arrival.is_call
    assert signer.decoded == 1


def test_the_arrival_of_a_forged_press_has_no_press() -> None:
    signer = CallbackSigner(b"secret")
    data = signer.encode(Action.FLIP, game_id=3, version=5).replace(":5:", ":6:")
    book = ReceiptBook(signer)
    update = press(2, data)
    book.stamp([update])
    arrival = book.arrival_for(update)
    assert arrival.press is None
    assert not arrival.is_call
    assert arrival.receipt.update_id == 2


def test_an_update_that_entered_unstamped_still_gets_its_press() -> None:
    signer = CallbackSigner(b"secret")
    update = press(3, signer.encode(Action.JOIN, game_id=4, version=0))
    arrival = ReceiptBook(signer).arrival_for(update)
    assert arrival.press == ButtonPress(Action.JOIN, 4, 0)
    assert arrival.receipt.update_id == 3
