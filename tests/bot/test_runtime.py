"""The runtime: a bounded language cache, failures kept local, nothing sent to a removed chat."""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import (
    Chat,
    ChatMemberBanned,
    ChatMemberMember,
    ChatMemberUpdated,
    Update,
    User,
)
from telegram.error import BadRequest, Forbidden

from telesnap.bot.delivery.lookout import Lookout
from telesnap.bot.handlers.membership import on_my_chat_member
from telesnap.bot.handlers.runtime import RUNTIME_KEY, Runtime
from telesnap.bot.render.i18n import translator
from telesnap.services.chat_settings import ChatLanguages, SettingsService
from telesnap.services.outbox.record import record_boards
from telesnap.services.outbox.service import OutboxService
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Receipt
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .runtimes import ChatBot, NoRows, wired_runtime

PLACE = Place(chat_id=-5, chat_type="group", title="Snap club")
ENGLISH = translator("en")
ANN, BOB = Actor(1, "Ann"), Actor(2, "Bob")
_update_ids = itertools.count(500)
SAFETY_S = 10.0
"""Only so that a broken sender fails the test instead of hanging it."""


class CountingUnits:
    """Units of work that count the reads (a language looked up in the database is one)."""

    def __init__(self, units: UnitsOfWork) -> None:
        self._units = units
        self.reads = 0

    def __call__(self, *, read_only: bool = False) -> UnitOfWork:
        self.reads += read_only
        return self._units(read_only=read_only)


async def test_the_language_cache_keeps_the_chats_used_lately(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    units = UnitsOfWork(session_factory)
    for chat_id in [-100, *range(-10, 0)]:
        await SettingsService(units, GameStore()).change(
            Place(chat_id), ANN, "language", "es", is_admin=known_admin(True)
        )
    counting = CountingUnits(units)
    settings = SettingsService(units, GameStore(), ChatLanguages(counting, kept=3))
    runtime = wired_runtime(settings=settings)
    for chat_id in range(1, 11):
        assert await runtime.language(Place(chat_id=-chat_id)) == "es"
        await runtime.language(Place(chat_id=-100))  # used all the time: kept
    assert len(runtime.settings.languages) == 3
    reads = counting.reads
    await runtime.language(Place(chat_id=-100))
    assert counting.reads == reads
    assert runtime.translations(Place(chat_id=-100)).gettext("Saved.") != "Saved.", (
        "what the handlers say is in the chat's language"
    )
    await runtime.language(Place(chat_id=-1))
    assert counting.reads == reads + 1, "a chat pushed out is looked up again"
    await runtime.close()


async def test_a_background_job_that_fails_is_logged_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime = wired_runtime()
    done = asyncio.Event()

    async def fails() -> None:
        raise LookupError("the chat's settings are gone")

    async def works() -> None:
        done.set()

    runtime.jobs.spawn(fails())
    runtime.jobs.spawn(works())
    await runtime.settle()
    assert done.is_set()
    assert any("the chat's settings are gone" in r.getMessage() for r in caplog.records)
    await runtime.close()


def unretrieved_reports() -> list[dict[str, Any]]:
    """What asyncio reports on the running loop (an exception never retrieved, say)."""
    reports: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, report: reports.append(report))
    return reports


class RefusingOne(ChatBot):
    """Telegram refuses one message for good (a 400), and takes the rest."""

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Any:
        if text == "<b>unbalanced":
            self.calls += 1
            raise BadRequest("Bad Request: can't parse entities")
        return await super().send_message(chat_id, text, **kwargs)


async def test_a_post_refused_for_good_is_dropped_and_logged_and_the_chat_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reports = unretrieved_reports()
    bot = RefusingOne()
    runtime = wired_runtime(bot=bot)
    runtime.say(PLACE, "<b>unbalanced", written_in=ENGLISH)
    runtime.say(PLACE, "Hello", written_in=ENGLISH)
    await runtime.settle()
    assert bot.texts(PLACE.chat_id) == ["Hello"]
    assert bot.calls == 2, "the refused message is not tried again"
    assert not runtime.senders.is_closed(PLACE.chat_id)
    refused = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert any(str(PLACE.chat_id) in r.getMessage() for r in refused), "logged with its chat"
    await runtime.close()
    gc.collect()
    assert reports == []


class EndingGames:
    """The games of a chat, ended in a few database round trips."""

    def __init__(self) -> None:
        self.ended: list[int] = []
        self.done = asyncio.Event()

    async def end_in_removed_chat(self, chat_id: int) -> list[int]:
        for _ in range(5):
            await asyncio.sleep(0)
        self.ended.append(chat_id)
        self.done.set()
        return [7]


KICKED = Forbidden("Forbidden: bot was kicked from the group chat")


async def test_a_403_on_a_post_closes_the_chat_and_ends_its_games() -> None:
    reports = unretrieved_reports()
    games = EndingGames()
    bot = ChatBot(refuse={PLACE.chat_id: KICKED})
    outbox = NoRows()
    runtime = wired_runtime(bot=bot, lobby=games, outbox=outbox)
    runtime.say(PLACE, "Hello", written_in=ENGLISH)
    await runtime.senders.flush()
    assert runtime.senders.is_closed(PLACE.chat_id)
    assert outbox.gone == [PLACE.chat_id], "its unsent rows are set aside"
    await asyncio.wait_for(games.done.wait(), SAFETY_S)
    assert games.ended == [PLACE.chat_id]
    calls = bot.calls
    runtime.say(PLACE, "Anyone there?", written_in=ENGLISH)
    await runtime.settle()
    assert bot.calls == calls, "nothing more is sent there"
    await runtime.close()
    gc.collect()
    assert reports == []


async def test_settling_waits_for_what_the_senders_started() -> None:
    """``Runtime.settle``: the jobs and the senders have done what they hold, including the
    ending of a chat's games that a 403 met by a sender started (the e2e tests rely on it).
    """
    games = EndingGames()
    runtime = wired_runtime(bot=ChatBot(refuse={PLACE.chat_id: KICKED}), lobby=games)
    runtime.say(PLACE, "Hello", written_in=ENGLISH)
    await runtime.settle()
    assert games.ended == [PLACE.chat_id]
    await runtime.close()


def at() -> Receipt:
    return Receipt(0, datetime.now(UTC), next(_update_ids))


class OutboxClock:
    """The outbox's wall clock: the real time, moved on by hand."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.ahead


def removal(chat_id: int, *, back: bool = False) -> Update:
    """The ``my_chat_member`` update of the bot removed from a group (or added back)."""
    bot = User(1, "telesnap", is_bot=True)
    admin = User(2, "Ann", is_bot=False)
    when = datetime.now(UTC)
    gone, there = ChatMemberBanned(bot, until_date=when), ChatMemberMember(bot)
    old, new = (gone, there) if back else (there, gone)
    change = ChatMemberUpdated(Chat(chat_id, Chat.SUPERGROUP), admin, when, old, new)
    return Update(next(_update_ids), my_chat_member=change)


async def test_nothing_is_posted_to_a_chat_that_removed_the_bot(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """A closed chat's rows (the abandoned game's board) are set aside, not kept pending to
    go out once the chat adds the bot back."""
    units = UnitsOfWork(session_factory)
    store = GameStore()
    record_boards(store)
    languages = ChatLanguages(units)
    clock = OutboxClock()
    outbox = OutboxService(units, clock, watch=units.outbox_watch, keep_lines=True)
    lobby = LobbyService(units, store, shuffle_seed=3, languages=languages)
    bot = ChatBot()
    runtime = wired_runtime(
        bot=bot, lobby=lobby, settings=SettingsService(units, store, languages), outbox=outbox
    )
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime})
    await lobby.open(PLACE, ANN, at())
    await lobby.join(PLACE, BOB, at())
    await lobby.start(PLACE, ANN, is_admin=known_admin(False), receipt=at())
    await runtime.settle()
    before = len(bot.sent)
    assert before > 0, "the lobby and the first board are out"

    await on_my_chat_member(removal(PLACE.chat_id), context)  # type: ignore[arg-type]
    runtime.say(PLACE, "Hello", written_in=ENGLISH)
    await runtime.settle()
    assert len(bot.sent) == before, "neither the abandoned game's board nor a reply goes out"
    async with UnitOfWork(session_factory, read_only=True) as uow:
        pending = await uow.outbox.pending(PLACE.chat_id)
    assert [row.kind for row in pending] == [], "its unsent boards are set aside"

    await on_my_chat_member(removal(PLACE.chat_id, back=True), context)  # type: ignore[arg-type]
    runtime.say(PLACE, "Hello again", written_in=ENGLISH)
    clock.ahead = timedelta(minutes=10)  # long after the removal: anything unsent is overdue
    await Lookout(runtime.senders, outbox).look_once()
    await runtime.settle()
    assert bot.texts(PLACE.chat_id)[before:] == ["Hello again"], (
        "added back, the bot posts again, and nothing from before its removal"
    )
    await runtime.close()


async def test_the_removal_update_ends_the_games_before_it_is_marked_handled() -> None:
    """The dispatcher marks an update handled once its handler returns: a kill right after
    must not leave the chat's games running (nothing would end them)."""
    ended: list[int] = []

    class Games:
        async def end_in_removed_chat(self, chat_id: int) -> list[int]:
            await asyncio.sleep(0)  # a database round trip
            ended.append(chat_id)
            return [7]

    runtime: Runtime = wired_runtime(lobby=Games())
    context = SimpleNamespace(bot_data={RUNTIME_KEY: runtime})
    await on_my_chat_member(removal(PLACE.chat_id), context)  # type: ignore[arg-type]
    assert ended == [PLACE.chat_id]
    assert runtime.senders.is_closed(PLACE.chat_id)
    # Run again (a retry after a database failure, a redelivery): the games are ended again.
    await on_my_chat_member(removal(PLACE.chat_id), context)  # type: ignore[arg-type]
    assert ended == [PLACE.chat_id, PLACE.chat_id]
    await runtime.close()
