"""A press is decoded once, when it is stamped; its press travels with its receipt."""

from __future__ import annotations

import time

from telegram import CallbackQuery, Chat, Message, Update, User

from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.render.callbacks import Action, ButtonPress, CallbackSigner
from telesnap.services.types import Receipt, Topic

USER = User(7, "Ada", is_bot=False)


class CountingSigner(CallbackSigner):
    """A signer that counts how often callback data is decoded (each checks an HMAC)."""

    decoded = 0

    def decode(self, data: str | None, *, chat_id: int | None = None) -> ButtonPress | None:
        self.decoded += 1
        return super().decode(data, chat_id=chat_id)


def press(update_id: int, data: str) -> Update:
    message = Message(1, None, Chat(-100, Chat.SUPERGROUP))  # type: ignore[arg-type]
    query = CallbackQuery(f"q{update_id}", USER, "instance", message, data)
    return Update(update_id, callback_query=query)


async def test_a_press_is_decoded_once_from_stamp_through_the_inbox_to_its_handler() -> None:
    signer = CountingSigner(b"secret")
    book = ReceiptBook(signer, "host-a")
    update = press(1, signer.encode(Action.SNAP, game_id=3, version=5))
    (stamped,) = book.stamp([update])
    # Taken back from the inbox by this process, with the receipt stored there.
    book.admit(update, Receipt.at(stamped.receipt.stamp_ns, 1, "host-a"))
    arrival = book.arrival_for(update)
    book.finished(update)
    assert arrival.receipt == stamped.receipt
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


def test_a_stamp_is_wall_clock_time_with_the_host_beside_it() -> None:
    book = ReceiptBook(CallbackSigner(b"secret"), "host-a")
    before = time.time_ns()
    (arrival,) = book.stamp([press(4, "x")])
    after = time.time_ns()
    assert before <= arrival.receipt.stamp_ns <= after
    assert arrival.receipt.host_id == "host-a"
    assert abs(arrival.receipt.wall.timestamp() * 1e9 - arrival.receipt.stamp_ns) < 1e6
    assert arrival.topic == Topic(-100, 0)


def test_an_update_stamped_by_another_host_keeps_that_stamp_and_is_decoded_here() -> None:
    signer = CountingSigner(b"secret")
    update = press(5, signer.encode(Action.SNAP, game_id=3, version=5))
    elsewhere = Receipt.at(1_700_000_000_000_000_000, 5, "host-b")
    arrival = ReceiptBook(signer, "host-a").admit(update, elsewhere)
    assert arrival.receipt == elsewhere
    assert arrival.is_call
    assert signer.decoded == 1
