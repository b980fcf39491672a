"""A runtime wired like the app's, from whatever fakes a test hands in."""

from __future__ import annotations

from typing import Any

from telesnap.bot.delivery.courier import Courier
from telesnap.bot.delivery.presenter import Presenter
from telesnap.bot.delivery.tidy import BoardTidier
from telesnap.bot.handlers.runtime import Runtime
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import RaceReferee
from telesnap.bot.render.callbacks import CallbackSigner

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
