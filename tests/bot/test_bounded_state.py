"""What the bot keeps per chat is let go when the chat goes quiet, so memory does not grow."""

from __future__ import annotations

import gc
import weakref

from telesnap.bot.delivery.direct import TextPost
from telesnap.bot.delivery.live import RecentLines
from telesnap.bot.delivery.pace import FloodLimits, Pacer
from telesnap.bot.delivery.sender import Senders
from telesnap.bot.delivery.show import HeadShow
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import JoinedCall, RaceReferee
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.coordination import LocalCoordination
from telesnap.services.play.store import GameStore
from telesnap.services.types import Place
from telesnap.services.views import RaceEnding, RaceOutcome

from .runtimes import SIGNER, ChatBot, GivenLanguages, NoRows

BOOK = ReceiptBook(CallbackSigner.for_token("123:secret"))


async def test_a_topic_lock_is_shared_while_used_and_forgotten_when_idle() -> None:
    store = GameStore()
    place = Place(chat_id=-1, thread_id=7)
    lock = store.lock(place)
    async with lock:
        assert store.lock(place) is lock, "a second change in the topic waits for the first"
        assert store.lock(Place(chat_id=-1)) is not lock, "another topic does not"
    forgotten = weakref.ref(lock)
    del lock
    gc.collect()
    assert forgotten() is None


async def test_the_senders_and_the_pace_let_go_of_chats_gone_quiet() -> None:
    """A chat's sender and its windows go once it is quiet: chats seen once never stay."""
    now = [1000.0]
    limits = FloodLimits(bot_messages=10_000)
    coordination = LocalCoordination()
    pacer = Pacer(limits, coordination, clock=lambda: now[0])
    bot, outbox = ChatBot(), NoRows()
    senders = Senders(
        bot,  # type: ignore[arg-type]
        outbox,  # type: ignore[arg-type]
        coordination,
        pacer,
        GivenLanguages(),  # type: ignore[arg-type]
        HeadShow(bot, outbox, SIGNER, RecentLines()),  # type: ignore[arg-type]
    )
    for n in range(300):
        senders.post(TextPost(-1000 - n, 0, "hi"))
    assert senders.busy_chats == 300
    assert await senders.flush()
    assert len(bot.sent) == 300
    assert senders.busy_chats == 0, "a chat with nothing left to send has no sender"
    assert len(pacer._chats) == 300, "each chat's window still counts its message"
    now[0] += limits.group_window_s + 1
    senders.post(TextPost(-2, 0, "hi"))
    assert await senders.flush()
    assert len(pacer._chats) <= 1, "only the chat just written to keeps its pace"
    await senders.close()


class NoRace:
    """A race service whose races turn out to have ended already."""

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        return RaceOutcome(RaceEnding.CALLED_OFF)


async def test_a_decided_race_leaves_nothing_behind() -> None:
    book = ReceiptBook(CallbackSigner.for_token("123:secret"))
    referee = RaceReferee(bot=None, races=NoRace(), book=book)  # type: ignore[arg-type]
    place = Place(chat_id=-9)
    referee.call_joined(place, JoinedCall(1, 1, deadline_ns=0, board_version=3), waiter=None)
    await referee.wait_until_decided(place)
    assert referee._races == {}
    await referee.close()
    assert referee._settled == {}, "what a decided race leaves is let go at the latest on close"
