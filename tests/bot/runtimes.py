"""A runtime wired like the app's, from whatever fakes a test hands in."""

from __future__ import annotations

from typing import Any

from telesnap.bot.callbacks import CallbackSigner
from telesnap.bot.courier import Courier
from telesnap.bot.presenter import Presenter
from telesnap.bot.races import RaceReferee
from telesnap.bot.receipts import ReceiptBook
from telesnap.bot.runtime import Runtime
from telesnap.bot.tidy import BoardTidier

SIGNER = CallbackSigner.for_token("123:secret")


def wired_runtime(
    *,
    bot: Any = None,
    lobby: Any = None,
    play: Any = None,
    boards: Any = None,
    races: Any = None,
    settings: Any = None,
    outbox: Any = None,
    signer: CallbackSigner = SIGNER,
) -> Runtime:
    """A runtime whose courier, presenter and referee are built as ``telesnap.app`` builds them."""
    book = ReceiptBook(signer)
    courier = Courier(outbox)
    presenter = Presenter(courier, signer, settings, boards, BoardTidier(courier))
    return Runtime(
        bot=bot,
        lobby=lobby,
        play=play,
        races=races,
        settings=settings,
        book=book,
        signer=signer,
        courier=courier,
        presenter=presenter,
        referee=RaceReferee(bot, races, book, presenter.show_race),
    )
