"""Lobby alerts: who is told, what a block (a 403 on the alert) and an erasure take away."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram.error import Forbidden

from telesnap.services.chat_settings import ChatLanguages, SettingsService
from telesnap.services.notify import NotifyService
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.services.privacy import PrivacyService
from telesnap.services.types import Actor, Place, Receipt
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..bot.runtimes import ChatBot, wired_runtime

Factory = async_sessionmaker[AsyncSession]
CLUB = Place(-500, title="Club")
ANN, BOB, CID = Actor(1, "Ann"), Actor(2, "Bob", language_code="es"), Actor(3, "Cid")


def receipt(update_id: int) -> Receipt:
    return Receipt.at(0, update_id)


async def private_rows(factory: Factory, user_id: int) -> list[dict[str, object]]:
    async with UnitOfWork(factory) as uow:
        pending = await uow.outbox.pending(user_id)
        return [dict(row.payload) for row in pending]


async def chats_heard_from(factory: Factory, user_id: int) -> list[str | None]:
    async with UnitOfWork(factory) as uow:
        return await uow.alerts.chats_of(user_id)


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
        "args": {
            "chat": "Club",
            "user_id": ANN.user_id,
            "name": "Ann",
            "link": "https://t.me/club/9",
        },
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
    store, languages = GameStore(), ChatLanguages(units)
    blocked = Forbidden("Forbidden: bot was blocked by the user")
    bot = ChatBot(refuse={BOB.user_id: blocked})
    runtime = wired_runtime(
        bot=bot,
        outbox=OutboxService(units, watch=units.outbox_watch, keep_lines=True),
        settings=SettingsService(units, store, languages),
        notify=notify,
    )
    await LobbyService(units, store, languages=languages).open(CLUB, ANN, receipt(1))
    await runtime.senders.flush()  # Bob's alert meets the 403 ...
    await runtime.jobs.settle()  # ... and what it reports is done
    assert runtime.senders.is_closed(BOB.user_id)
    assert await private_rows(session_factory, BOB.user_id) == [], "his alert is set aside"
    assert await chats_heard_from(session_factory, BOB.user_id) == []
    state = await notify.subscribe(CLUB, BOB)
    assert not state.reachable, "a blocked bot cannot write to him"
    assert bot.texts(CLUB.chat_id), "the lobby itself is out"
    await runtime.close()


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
    assert await chats_heard_from(session_factory, ANN.user_id) == ["Other"]
    await privacy.forget_person(BOB.user_id)
    assert await chats_heard_from(session_factory, BOB.user_id) == []
    assert not (await notify.subscribe(other, BOB)).reachable
    assert (await notify.subscribe(other, ANN)).reachable
