"""The runtime and its presenter: a bounded language cache, nothing sent to a removed chat."""

from __future__ import annotations

import asyncio
import gc
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from telegram import (
    Chat,
    ChatMemberBanned,
    ChatMemberMember,
    ChatMemberUpdated,
    Update,
    User,
)
from telegram.error import Forbidden

from telesnap.bot.delivery import presenter as presenter_module
from telesnap.bot.handlers.membership import on_my_chat_member
from telesnap.bot.handlers.runtime import RUNTIME_KEY, Runtime
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.services.types import Place

from .runtimes import wired_runtime

SIGNER = CallbackSigner.for_token("123:secret")
PLACE = Place(chat_id=-5)


class HeldOutbox:
    """An outbox whose sends complete only when the test says so."""

    def __init__(self) -> None:
        self.posts: list[tuple[Any, asyncio.Future[Any]]] = []

    def submit(self, chat_id: int, post: Any) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.posts.append((post, future))
        return future


class ChatSettings:
    def __init__(self) -> None:
        self.lookups = 0

    async def language(self, place: Place) -> str | None:
        self.lookups += 1
        return "es"


class GoneChats:
    """The part of the outbox the presenter uses for a chat that removed the bot."""

    def __init__(self) -> None:
        self.gone: list[int] = []

    async def chat_gone(self, chat_id: int) -> None:
        self.gone.append(chat_id)


def runtime_with(
    outbox: Any, lobby: Any = None, settings: Any = None, boards: Any = None
) -> Runtime:
    return wired_runtime(
        lobby=lobby, settings=settings, outbox=outbox, boards=boards, signer=SIGNER
    )


async def test_the_language_cache_keeps_the_chats_used_lately(monkeypatch: Any) -> None:
    monkeypatch.setattr(presenter_module, "LANGUAGE_CACHE_SIZE", 3)
    settings = ChatSettings()
    runtime = runtime_with(HeldOutbox(), settings=settings)
    for chat_id in range(10):
        assert await runtime.presenter.remember_language(Place(chat_id=-chat_id)) == "es"
        await runtime.presenter.remember_language(Place(chat_id=0))  # used all the time: kept
    assert runtime.presenter.language_cache_size == 3
    lookups = settings.lookups
    await runtime.presenter.remember_language(Place(chat_id=0))
    assert settings.lookups == lookups
    await runtime.presenter.remember_language(Place(chat_id=-1))
    assert settings.lookups == lookups + 1, "a chat pushed out is looked up again"


async def test_a_background_job_that_fails_is_logged_and_stops_nothing(
    caplog: Any,
) -> None:
    runtime = runtime_with(HeldOutbox())
    done = asyncio.Event()

    async def fails() -> None:
        raise LookupError("the chat's settings are gone")

    async def works() -> None:
        done.set()

    runtime.courier.spawn(fails())
    runtime.courier.spawn(works())
    await runtime.courier.settle()
    assert done.is_set()
    assert any("the chat's settings are gone" in r.getMessage() for r in caplog.records)


async def test_a_post_that_fails_for_good_leaves_no_unretrieved_exception() -> None:
    outbox = HeldOutbox()
    runtime = runtime_with(outbox)
    reports: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, report: reports.append(report))
    runtime.presenter.say(PLACE, "Hello")
    _post, future = outbox.posts.pop()
    future.set_exception(Forbidden("Forbidden: bot was kicked from the group chat"))
    await asyncio.sleep(0)  # the future's callbacks run
    del future
    gc.collect()
    assert reports == []


async def test_nothing_is_posted_to_a_chat_that_removed_the_bot() -> None:
    outbox = HeldOutbox()

    class NoGames:
        async def end_in_removed_chat(self, chat_id: int) -> list[int]:
            return []

    boards = GoneChats()
    runtime = runtime_with(outbox, NoGames(), boards=boards)
    runtime.bot_removed(PLACE.chat_id)
    runtime.presenter.say(PLACE, "Hello")
    runtime.presenter.show_notices(PLACE)
    await runtime.courier.settle()
    assert outbox.posts == []
    assert PLACE.chat_id in boards.gone, "its unsent lobbies and notices are set aside"
    runtime.bot_added(PLACE.chat_id)
    runtime.presenter.say(PLACE, "Hello again")
    assert len(outbox.posts) == 1


def removal(chat_id: int) -> Update:
    """The ``my_chat_member`` update of the bot removed from a group."""
    bot = User(1, "telesnap", is_bot=True)
    admin = User(2, "Ann", is_bot=False)
    when = datetime.now(UTC)
    change = ChatMemberUpdated(
        Chat(chat_id, Chat.SUPERGROUP),
        admin,
        when,
        ChatMemberMember(bot),
        ChatMemberBanned(bot, until_date=when),
    )
    return Update(41, my_chat_member=change)


async def test_the_removal_update_ends_the_games_before_it_is_marked_handled() -> None:
    """The dispatcher marks an update handled once its handler returns: a kill right after
    must not leave the chat's games running (nothing would end them)."""
    ended: list[int] = []

    class Games:
        async def end_in_removed_chat(self, chat_id: int) -> list[int]:
            await asyncio.sleep(0)  # a database round trip
            ended.append(chat_id)
            return [7]

    runtime = runtime_with(HeldOutbox(), Games(), boards=GoneChats())
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime})
    await on_my_chat_member(removal(PLACE.chat_id), context)  # type: ignore[arg-type]
    assert ended == [PLACE.chat_id]
    assert runtime.is_removed_from(PLACE.chat_id)
    # Run again (a retry after a database failure, a redelivery): the games are ended again.
    await on_my_chat_member(removal(PLACE.chat_id), context)  # type: ignore[arg-type]
    assert ended == [PLACE.chat_id, PLACE.chat_id]
