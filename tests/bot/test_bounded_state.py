"""What the bot keeps per chat is let go when the chat goes quiet, so memory does not grow."""

from __future__ import annotations

import asyncio
import gc
import weakref
from datetime import UTC, datetime
from typing import Any

from telegram import Chat, Message, Update

from telesnap.bot.delivery.pace import FloodLimits, Outbox, Post
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import JoinedCall, RaceReferee
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.services.play.store import GameStore
from telesnap.services.types import Place
from telesnap.services.views import RaceEnding, RaceOutcome

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


def message_update(update_id: int, chat_id: int) -> Update:
    chat = Chat(id=chat_id, type=Chat.GROUP)
    message = Message(message_id=1, date=datetime.now(UTC), chat=chat, text="hi")
    return Update(update_id=update_id, message=message)


class CountingPost:
    """A post that only counts how often it was sent."""

    key: str | None = None

    def __init__(self) -> None:
        self.sent = 0

    async def send(self, bot: Any) -> int:
        self.sent += 1
        return self.sent

    def absorb(self, newer: Post) -> bool:
        return False


async def test_outbox_forgets_chats_whose_flood_window_has_passed() -> None:
    now = [1000.0]
    limits = FloodLimits(bot_messages=10_000)
    outbox = Outbox(bot=None, limits=limits, clock=lambda: now[0])  # type: ignore[arg-type]
    posts = [CountingPost() for _ in range(300)]
    await asyncio.gather(*(outbox.submit(-1000 - n, post) for n, post in enumerate(posts)))
    assert all(post.sent == 1 for post in posts)
    outbox.submit(-1, CountingPost())
    assert outbox.lane_count == 301, "each chat's window still counts its message"
    await outbox.flush()
    now[0] += limits.group_window_s + 1
    await outbox.submit(-2, CountingPost())
    assert outbox.lane_count == 1, "only the chat just written to keeps a lane"
    await outbox.close()


class NoRace:
    """A race service whose races turn out to have ended already."""

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        return RaceOutcome(RaceEnding.CALLED_OFF)


async def test_a_decided_race_leaves_nothing_behind() -> None:
    async def show(place: Place, outcome: Any) -> None:
        raise AssertionError("nothing to show")

    book = ReceiptBook(CallbackSigner.for_token("123:secret"))
    referee = RaceReferee(bot=None, races=NoRace(), book=book, show=show)  # type: ignore[arg-type]
    place = Place(chat_id=-9)
    referee.call_joined(place, JoinedCall(1, 1, deadline_ns=0, board_version=3), waiter=None)
    await referee.wait_until_decided(place)
    assert referee._races == {}
    await referee.close()
    assert referee._settled == {}, "what a decided race leaves is let go at the latest on close"
