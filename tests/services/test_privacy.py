"""Privacy without the bot: the removed chats' purge, and what the inbox keeps of an update."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from sqlalchemy import event, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, Update

from telesnap.services.housekeeping import HousekeepingService
from telesnap.services.inbox import InboxService, StoredUpdate, trimmed
from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.privacy import CHATS_PER_SWEEP, FORMER_PLAYER, PrivacyService
from telesnap.services.stats.service import StatsService
from telesnap.storage.models import (
    Chat,
    Game,
    GamePlayerResult,
    GameResult,
    InboxUpdate,
    OutboxMessage,
    PlayerStats,
)
from telesnap.storage.repositories.privacy import PURGE_KEY
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from .stats_games import CHATS, PLAYERS, Driver
from .test_play_flow import ANN, BOB, CID, PLACE, receipt

Factory = async_sessionmaker[AsyncSession]
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
KEPT, SHORT, BACK = -401, -402, -403


async def a_chat_with_a_game(factory: Factory, chat_id: int) -> None:
    async with UnitOfWork(factory) as uow:
        await uow.chats.upsert(chat_id, "group", "Club")
        await uow.users.upsert(7, "Ann")
        uow.session.add(Game(chat_id=chat_id, creator_id=7, status="finished"))


async def chats_left(factory: Factory) -> set[int]:
    async with UnitOfWork(factory) as uow:
        return set((await uow.session.scalars(select(Chat.id))).all())


async def games_left(factory: Factory) -> int:
    async with UnitOfWork(factory) as uow:
        return int(await uow.session.scalar(select(func.count()).select_from(Game)) or 0)


async def test_a_chat_that_removed_the_bot_is_erased_once_its_retention_passed(
    session_factory: Factory,
) -> None:
    units = UnitsOfWork(session_factory)
    privacy = PrivacyService(units)
    for chat_id in (KEPT, SHORT, BACK):
        await a_chat_with_a_game(session_factory, chat_id)
        await privacy.bot_removed(chat_id, NOW - timedelta(days=29))
    async with UnitOfWork(session_factory) as uow:
        await uow.settings.save_values(SHORT, 0, {"keep_after_removal_days": 7})
    await privacy.bot_added(BACK)

    tidied = await HousekeepingService(units).tidy(NOW)
    assert tidied.purged_chats == 1
    assert await chats_left(session_factory) == {KEPT, BACK}, "7 days passed, 30 did not"

    assert (await HousekeepingService(units).tidy(NOW + timedelta(days=1))).purged_chats == 1
    assert await chats_left(session_factory) == {BACK}, "the default 30 days have passed"
    assert await games_left(session_factory) == 1, "the chat that added the bot back keeps its"


async def test_one_worker_purges_at_a_time(session_factory: Factory) -> None:
    units = UnitsOfWork(session_factory)
    await a_chat_with_a_game(session_factory, KEPT)
    await PrivacyService(units).bot_removed(KEPT, NOW - timedelta(days=40))
    async with session_factory() as other:
        if other.get_bind().dialect.name == "postgresql":
            # Another worker purging holds the lock: this one leaves the chat to it.
            await other.execute(text(f"SELECT pg_advisory_xact_lock({PURGE_KEY})"))
            assert await PrivacyService(units).purge_removed_chats(NOW) == 0
            assert await chats_left(session_factory) == {KEPT}
    assert await PrivacyService(units).purge_removed_chats(NOW) == 1
    assert await chats_left(session_factory) == set()


REPLY = {
    "update_id": 10,
    "message": {
        "message_id": 5,
        "date": 1_700_000_000,
        "chat": {"id": -5, "type": "group", "title": "Club"},
        "from": {"id": 7, "is_bot": False, "first_name": "Ann", "language_code": "es"},
        "text": "/stats",
        "entities": [{"type": "bot_command", "offset": 0, "length": 6}],
        "reply_to_message": {
            "message_id": 4,
            "date": 1_699_999_999,
            "chat": {"id": -5, "type": "group", "title": "Club"},
            "from": {"id": 8, "is_bot": False, "first_name": "Bob"},
            "text": "my phone number is 555 0100",
            "link_preview_options": {"is_disabled": True},
        },
    },
}


async def test_the_inbox_stores_only_what_the_bot_reads(session_factory: Factory) -> None:
    stored = StoredUpdate(10, -5, 0, False, REPLY, 1, "host")
    await InboxService(UnitsOfWork(session_factory)).store([stored])
    async with UnitOfWork(session_factory) as uow:
        payload = await uow.session.scalar(select(InboxUpdate.payload))
    assert payload is not None
    assert "555 0100" not in str(payload), "another person's replied-to text is not kept"
    assert payload == trimmed(REPLY)
    update = Update.de_json(payload, Bot("1:x"))
    assert update.message is not None
    assert update.message.text == "/stats"
    assert update.message.reply_to_message is not None
    assert update.message.reply_to_message.from_user is not None
    assert update.message.reply_to_message.from_user.id == 8, "who was replied to is kept"


async def figures_in_two_chats(factory: Factory) -> None:
    """Ann (7) played in KEPT and in SHORT; Bob (8) only in SHORT."""
    async with UnitOfWork(factory) as uow:
        await uow.users.upsert(7, "Ann")
        await uow.users.upsert(8, "Bob")
        for chat_id in (KEPT, SHORT):
            await uow.chats.upsert(chat_id, "group", "Club")
        for scope, user, games in (
            (KEPT, 7, 2),
            (SHORT, 7, 3),
            (SHORT, 8, 3),
            (0, 7, 5),
            (0, 8, 3),
        ):
            uow.session.add(
                PlayerStats(scope_id=scope, user_id=user, games=games, rated_games=games,
                            rating_mu=25.0, rating_sigma=1.0, rating_ordinal=22.0)
            )  # fmt: skip


async def test_figures_across_chats_are_shown_only_where_the_chat_opted_in(
    session_factory: Factory,
) -> None:
    await figures_in_two_chats(session_factory)
    stats = StatsService(UnitsOfWork(session_factory), min_games=1, min_timed_calls=1)

    ann = await stats.player(KEPT, 7, "Ann")
    assert ann.chat is not None
    assert ann.chat.games == 2
    assert ann.everywhere is None, "off by default: her games elsewhere are not shown here"
    board = await stats.leaderboard(KEPT, is_global=True)
    assert not board.is_global
    assert [entry.name for entry in board.entries] == ["Ann"], "only people seen in this chat"

    async with UnitOfWork(session_factory) as uow:
        await uow.settings.save_values(KEPT, 0, {"shared_stats": True})
    ann = await stats.player(KEPT, 7, "Ann")
    assert ann.everywhere is not None
    assert ann.everywhere.games == 5
    board = await stats.leaderboard(KEPT, is_global=True)
    assert board.is_global
    assert board.entries[0].figures.games == 5, "her figures across chats"
    assert [entry.name for entry in board.entries] == ["Ann"], "Bob's only chat did not opt in"
    async with UnitOfWork(session_factory) as uow:
        await uow.settings.save_values(SHORT, 0, {"shared_stats": True})
    board = await stats.leaderboard(KEPT, is_global=True)
    assert {entry.name for entry in board.entries} == {"Ann", "Bob"}

    own = await stats.player(7, 7, "Ann")  # her private chat with the bot
    assert own.everywhere is not None
    assert own.everywhere.games == 5
    assert not (await stats.leaderboard(7, is_global=True)).is_global, "no board of others"


async def test_a_chat_sharing_figures_shows_none_of_someone_who_never_played_there(
    session_factory: Factory,
) -> None:
    await figures_in_two_chats(session_factory)
    async with UnitOfWork(session_factory) as uow:
        await uow.settings.save_values(KEPT, 0, {"shared_stats": True})
    stats = StatsService(UnitsOfWork(session_factory))
    bob = await stats.player(KEPT, 8, "Bob")  # he played only in SHORT, which keeps its own
    assert (bob.chat, bob.everywhere, bob.ratings) == (None, None, ())
    own = await stats.player(8, 8, "Bob")  # his private chat with the bot: all of his
    assert own.everywhere is not None
    assert own.everywhere.games == 3


def pressed(update_id: int, user_id: int, first_name: str) -> StoredUpdate:
    """A press (a Snap call) on a board in the "Algebra club" group."""
    chat = {"id": -5, "type": "group", "title": "Algebra club"}
    payload = {
        "update_id": update_id,
        "callback_query": {
            "id": str(update_id),
            "from": {"id": user_id, "is_bot": False, "first_name": first_name},
            "data": "snap",
            "message": {"message_id": 3, "date": 1_700_000_000, "chat": chat},
        },
    }
    return StoredUpdate(update_id, -5, 0, True, payload, update_id, "host")


async def test_forgetme_leaves_other_peoples_updates_whatever_their_names(
    session_factory: Factory,
) -> None:
    """Al's name is part of Alba's and of the chat's: their updates are not his."""
    units = UnitsOfWork(session_factory)
    async with UnitOfWork(session_factory) as uow:
        await uow.users.upsert(7, "Al")
        await uow.users.upsert(8, "Alba")
    inbox = InboxService(units)
    await inbox.store([pressed(21, 8, "Alba"), pressed(22, 8, "Alba"), pressed(23, 7, "Al")])
    async with UnitOfWork(session_factory) as uow:
        for handled in (22, 23):  # Snap calls their races answer: handled, content kept
            await uow.updates.mark_handled(handled, keep_content=True)
    await PrivacyService(units).forget_person(7)
    async with UnitOfWork(session_factory) as uow:
        rows = await uow.session.execute(select(InboxUpdate.update_id, InboxUpdate.payload))
        payloads = dict(rows.all())
    assert {update_id for update_id, payload in payloads.items() if "from" in str(payload)} == {
        21,
        22,
    }, "Alba's pending and handled calls stay whole"
    assert payloads[23] == {"callback_query": {"id": "23"}}, "Al's handled one keeps its id only"


async def test_every_worker_shows_a_player_who_left_then_erased_their_data_as_a_former_one(
    session_factory: Factory,
) -> None:
    """Each worker caches the running game; the erasure is done by none of them."""
    units = UnitsOfWork(session_factory)
    workers = [GameStore(shared=True), GameStore(shared=True)]
    lobby = LobbyService(units, workers[0], shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    for player in (BOB, CID):
        await lobby.join(PLACE, player, receipt())
    await lobby.start(PLACE, ANN, is_admin=False, receipt=receipt())
    await lobby.leave(PLACE, ANN, receipt())
    plays = [PlayService(units, store) for store in workers]
    for play in plays:
        assert (await play.table(PLACE)).table.players[0].name == "Ann"
    assert (await PrivacyService(units).forget_person(ANN.user_id)).done
    async with UnitOfWork(session_factory) as uow:  # she plays again elsewhere: named again
        await uow.users.upsert(ANN.user_id, "Ann")
    restarted = PlayService(units, GameStore(shared=True))
    for play in [*plays, restarted]:
        assert (await play.table(PLACE)).table.players[0].name == FORMER_PLAYER


async def test_forgetme_reads_only_the_outbox_rows_that_may_name_the_person(
    session_factory: Factory,
) -> None:
    """The outbox keeps two days of rows: an erasure that read them all held every game up."""
    person, name = 700123456, 'Zoë "Z" Ünal'
    async with UnitOfWork(session_factory) as uow:
        await uow.users.upsert(person, 'Zoë "Z"', "Ünal")
        others = [
            OutboxMessage(chat_id=-5, kind="notice", payload={"notice": {"name": f"Bo {n}"}})
            for n in range(300)
        ]
        theirs = [
            OutboxMessage(chat_id=-5, kind="notice", payload={"notice": {"name": name}}),
            OutboxMessage(chat_id=-5, kind="board", payload={"players": [[person, "Z"]]}),
        ]
        uow.session.add_all([*others, *theirs])
    loaded: list[int] = []

    def count(row: OutboxMessage, _context: object) -> None:
        loaded.append(row.id)

    event.listen(OutboxMessage, "load", count)
    try:
        await PrivacyService(UnitsOfWork(session_factory)).forget_person(person)
    finally:
        event.remove(OutboxMessage, "load", count)
    assert len(loaded) == len(theirs), "only the rows naming them are read"
    async with UnitOfWork(session_factory) as uow:
        payloads = (await uow.session.scalars(select(OutboxMessage.payload))).all()
    assert not [p for p in payloads if name in str(p) or f"[{person}, 'Z']" in str(p)]
    assert sum("Bo " in str(payload) for payload in payloads) == len(others)


async def test_a_game_left_then_erased_gives_its_leaver_no_figures_when_it_ends(
    session_factory: Factory,
) -> None:
    """She leaves, erases her data; the others finish: nothing of hers is kept again."""
    driver = Driver(session_factory, random.Random(5))
    place, (ann, bob, cid) = CHATS[0], PLAYERS[:3]
    await driver.settings.change(place, ann, "flip_limit", "20", is_admin=known_admin(True))
    game_id = await driver.start_one(place, [ann, bob, cid])
    await driver.lobby.leave(place, ann, driver.receipt())
    assert (await PrivacyService(UnitsOfWork(session_factory)).forget_person(ann.user_id)).done
    await driver.finish_one(place, [bob, cid])
    async with UnitOfWork(session_factory) as uow:
        counted = await uow.session.scalar(
            select(GameResult.counted).where(GameResult.game_id == game_id)
        )
        kept = (await uow.session.scalars(select(PlayerStats.user_id))).all()
        her_rating = await uow.session.scalar(
            select(GamePlayerResult.chat_mu).where(
                GamePlayerResult.game_id == game_id, GamePlayerResult.user_id == ann.user_id
            )
        )
    assert counted, "the others played it to its end"
    assert ann.user_id not in kept, "no figures, in this chat or across chats"
    assert {bob.user_id, cid.user_id} <= set(kept)
    assert her_rating is None


async def test_chats_kept_longer_do_not_hide_a_chat_whose_retention_passed(
    session_factory: Factory,
) -> None:
    """A sweep looks at so many chats; the next one looks past them, so none waits for ever."""
    units = UnitsOfWork(session_factory)
    privacy = PrivacyService(units)
    long_kept = [-1000 - n for n in range(CHATS_PER_SWEEP)]
    async with UnitOfWork(session_factory) as uow:
        for chat_id in [*long_kept, SHORT]:
            await uow.chats.upsert(chat_id, "group", "Club")
        for chat_id in long_kept:
            await uow.settings.save_values(chat_id, 0, {"keep_after_removal_days": 365})
        await uow.settings.save_values(SHORT, 0, {"keep_after_removal_days": 7})
    for chat_id in long_kept:
        await privacy.bot_removed(chat_id, NOW - timedelta(days=20))
    await privacy.bot_removed(SHORT, NOW - timedelta(days=10))
    purged = [await privacy.purge_removed_chats(NOW) for _ in range(2)]
    assert purged == [0, 1], "the first sweep looked at the chats kept a year"
    assert SHORT not in await chats_left(session_factory)
    assert len(await chats_left(session_factory)) == CHATS_PER_SWEEP


async def test_forgetme_erases_a_blank_name_shown_as_the_username_and_no_one_elses(
    session_factory: Factory,
) -> None:
    """A blank-looking name is shown as "@username", or "👤" for anyone without one."""
    quiet, other = 700123457, 700123458
    async with UnitOfWork(session_factory) as uow:
        await uow.users.upsert(quiet, "\u3164", None, "quiet_one")
        await uow.users.upsert(other, "\u3164")
        uow.session.add_all(
            [
                OutboxMessage(chat_id=-5, kind="notice", payload={"notice": {"name": name}})
                for name in ("@quiet_one", "👤")
            ]
        )
    await PrivacyService(UnitsOfWork(session_factory)).forget_person(quiet)
    async with UnitOfWork(session_factory) as uow:
        payloads = (await uow.session.scalars(select(OutboxMessage.payload))).all()
    shown = [payload["notice"]["name"] for payload in payloads]
    assert "@quiet_one" not in shown
    assert "👤" in shown, "another blank-named person's sign is not theirs"


async def test_forgetme_erases_the_name_as_told_apart_from_a_namesake(
    session_factory: Factory,
) -> None:
    """Final standings keep names without ids: "Ann (@ann_real)" and "Ann (2)" go too."""
    with_username, without = 700123459, 700123460
    async with UnitOfWork(session_factory) as uow:
        await uow.users.upsert(with_username, "Ann", None, "ann_real")
        await uow.users.upsert(without, "Ann")
        uow.session.add(
            OutboxMessage(
                chat_id=-5,
                kind="board",
                payload={"standings": [{"name": "Ann (@ann_real)"}, {"name": "Ann (2)"}]},
            )
        )
    privacy = PrivacyService(UnitsOfWork(session_factory))
    await privacy.forget_person(with_username)
    await privacy.forget_person(without)
    async with UnitOfWork(session_factory) as uow:
        (payload,) = (await uow.session.scalars(select(OutboxMessage.payload))).all()
    assert payload == {"standings": [{"name": FORMER_PLAYER}, {"name": FORMER_PLAYER}]}
