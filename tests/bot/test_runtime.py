"""The runtime and its presenter: one lobby message per game, a bounded language cache."""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass
from typing import Any

from telegram.error import Forbidden

from telesnap.bot import presenter as presenter_module
from telesnap.bot.callbacks import CallbackSigner
from telesnap.bot.posts import EditPost, TextPost
from telesnap.bot.runtime import Runtime
from telesnap.services.types import Place
from telesnap.services.views import LobbyView

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


@dataclass
class SentMessage:
    message_id: int


class LobbyMessages:
    """The part of the lobby service the runtime uses to remember the lobby message."""

    def __init__(self) -> None:
        self.remembered: list[tuple[int, int]] = []

    async def set_lobby_message(self, place: Place, game_id: int, message_id: int) -> None:
        self.remembered.append((game_id, message_id))


class ChatSettings:
    def __init__(self) -> None:
        self.lookups = 0

    async def show(self, place: Place) -> Any:
        self.lookups += 1
        return type("Shown", (), {"language": "es"})()


def runtime_with(outbox: Any, lobby: Any = None, settings: Any = None) -> Runtime:
    return wired_runtime(lobby=lobby, settings=settings, outbox=outbox, signer=SIGNER)


def lobby(*names: str) -> LobbyView:
    players = tuple((n, name) for n, name in enumerate(names, start=1))
    return LobbyView(game_id=9, creator_id=1, players=players, status="lobby")


async def test_joins_before_the_lobby_message_is_known_edit_it_instead_of_posting_again() -> None:
    outbox, messages = HeldOutbox(), LobbyMessages()
    runtime = runtime_with(outbox, messages)
    runtime.presenter.show_lobby(PLACE, lobby("Ann"))
    runtime.presenter.show_lobby(PLACE, lobby("Ann", "Bob"))
    runtime.presenter.show_lobby(PLACE, lobby("Ann", "Bob", "Cid"))
    assert [type(post) for post, _ in outbox.posts] == [TextPost], "one lobby message"
    first_post, sent = outbox.posts[0]
    assert "Bob" not in first_post.text
    sent.set_result(SentMessage(41))
    await runtime.courier.settle()
    assert messages.remembered == [(9, 41)]
    (edit, _) = outbox.posts[1]
    assert isinstance(edit, EditPost)
    assert edit.message_id == 41
    assert "Cid" in edit.text
    assert len(outbox.posts) == 2


async def test_a_lobby_shown_once_is_not_edited_after_it_is_sent() -> None:
    outbox, messages = HeldOutbox(), LobbyMessages()
    runtime = runtime_with(outbox, messages)
    runtime.presenter.show_lobby(PLACE, lobby("Ann"))
    outbox.posts[0][1].set_result(SentMessage(41))
    await runtime.courier.settle()
    assert len(outbox.posts) == 1


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

    runtime = runtime_with(outbox, NoGames())
    runtime.bot_removed(PLACE.chat_id)
    runtime.presenter.say(PLACE, "Hello")
    runtime.presenter.show_lobby(PLACE, lobby("Ann"))
    await runtime.courier.settle()
    assert outbox.posts == []
    runtime.bot_added(PLACE.chat_id)
    runtime.presenter.say(PLACE, "Hello again")
    assert len(outbox.posts) == 1
