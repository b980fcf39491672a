"""Lobby alerts without the bot: who is told, what a block and an erasure take away."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.bot.delivery.courier import Courier
from telesnap.bot.handlers.runtime import Runtime
from telesnap.services.notify import NotifyService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.services.privacy import PrivacyService
from telesnap.services.types import Actor, Place, Receipt
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

Factory = async_sessionmaker[AsyncSession]
CLUB = Place(-500, title="Club")
ANN, BOB, CID = Actor(1, "Ann"), Actor(2, "Bob", language_code="es"), Actor(3, "Cid")


def receipt(update_id: int) -> Receipt:
    return Receipt.at(0, update_id)


async def private_rows(factory: Factory, user_id: int) -> list[dict[str, object]]:
    async with UnitOfWork(factory) as uow:
        pending = await uow.outbox.pending(user_id)
        return [dict(row.payload) for row in pending]


async def test_the_open_writes_one_private_notice_per_reachable_subscriber_but_the_opener(
    session_factory: Factory,
) -> None:
    units = UnitsOfWork(session_factory)
    notify = NotifyService(units)
    for actor in (ANN, BOB, CID):
        await notify.subscribe(CLUB, actor)
    await notify.private_chat_opened(ANN.user_id)
    await notify.private_chat_opened(BOB.user_id)  # Cid never started the bot
    opened = await LobbyService(units, GameStore()).open(
        CLUB, ANN, receipt(1), link="https://t.me/club/9"
    )
    assert opened.alerted == ((BOB.user_id, "es"),)
    (row,) = await private_rows(session_factory, BOB.user_id)
    assert row["notice"] == {
        "kind": "lobby_opened",
        "args": {"chat": "Club", "name": "Ann", "link": "https://t.me/club/9"},
    }
    assert await private_rows(session_factory, ANN.user_id) == []
    assert await private_rows(session_factory, CID.user_id) == []


async def test_a_block_reported_by_a_403_drops_the_person_from_every_list(
    session_factory: Factory,
) -> None:
    units = UnitsOfWork(session_factory)
    notify = NotifyService(units)
    await notify.private_chat_opened(BOB.user_id)
    await notify.subscribe(CLUB, BOB)
    await notify.subscribe(Place(-501, title="Other"), BOB)
    courier = Courier(outbox=None)  # type: ignore[arg-type]
    fields = dict.fromkeys(("bot", "lobby", "play", "races", "settings", "book", "signer"))
    runtime = Runtime(
        **fields,  # type: ignore[arg-type]
        courier=courier,
        presenter=None,  # type: ignore[arg-type]
        referee=None,  # type: ignore[arg-type]
        notify=notify,
    )
    runtime.bot_removed(BOB.user_id)  # what the outbox calls on a 403
    await courier.settle()
    assert await notify.subscribed_chats(BOB.user_id) == ()
    state = await notify.subscribe(CLUB, BOB)
    assert not state.reachable, "a blocked bot cannot write to him"


async def test_forgetme_and_forgetchat_erase_the_alerts(session_factory: Factory) -> None:
    units = UnitsOfWork(session_factory)
    notify = NotifyService(units)
    other = Place(-501, title="Other")
    for actor in (ANN, BOB):
        await notify.private_chat_opened(actor.user_id)
        await notify.subscribe(CLUB, actor)
        await notify.subscribe(other, actor)
    privacy = PrivacyService(units)
    await privacy.forget_chat(CLUB.chat_id)
    assert await notify.subscribed_chats(ANN.user_id) == ("Other",)
    await privacy.forget_person(BOB.user_id)
    assert await notify.subscribed_chats(BOB.user_id) == ()
    assert not (await notify.subscribe(other, BOB)).reachable
    assert (await notify.subscribe(other, ANN)).reachable
