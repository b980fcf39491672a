"""Stats on a real database: every stored figure and rating recomputed from the history rows.

The recomputation here is written independently of telesnap.services.stats_*: it
reads the operation JSON directly, applies the README's rules, and rates with
openskill itself.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import shutil
import sqlite3
import statistics
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from openskill.models import PlackettLuce
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telesnap.services.stats.audit import (
    check_game,
    parse_document,
    recompute_ratings,
    stored_game,
    write_document,
)
from telesnap.services.stats.service import StatsService
from telesnap.services.stats.views import Ranking
from telesnap.services.types import Place
from telesnap.storage.database import create_engine
from telesnap.storage.database import session_factory as make_session_factory
from telesnap.storage.migrate import alembic_config, upgrade_database
from telesnap.storage.models import Game, GameOperation, GamePlayer, GamePlayerResult, GameResult
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

from ..admin import known_admin
from ..storage.test_migrations import table_names
from .stats_games import CHATS, PLAYERS, Driver

GAMES = 10
REACTION_COUNTS = "73228d083249"
"""The revision that keeps reaction times as counts per ms."""
UNTIMED: dict[str, Any] = {
    "median_reaction_ms": None,
    "best_reaction_ms": None,
    "lower_median_ms": None,
    "reaction_counts": [],
}
"""The reaction figures of a player with no timed call (the others are 0)."""


@pytest.fixture(scope="session")
def played_sqlite_file(
    sqlite_template_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A SQLite file holding the games ``played`` plays, played once per test session."""
    path = tmp_path_factory.mktemp("played") / "telesnap.db"
    shutil.copyfile(sqlite_template_file, path)

    async def play() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{path}")
        try:
            await Driver(make_session_factory(engine), random.Random(5)).play_games(GAMES)
        finally:
            await engine.dispose()

    with ThreadPoolExecutor(max_workers=1) as executor:  # a loop of its own
        executor.submit(asyncio.run, play()).result()
    assert not path.with_name(f"{path.name}-wal").exists(), "the played file's WAL is left over"
    return path


@pytest.fixture
async def played(
    request: pytest.FixtureRequest,
    migrated_database_url: str,
    session_factory: async_sessionmaker[AsyncSession],
) -> Driver:
    """GAMES games played by a Driver with a fixed seed (on SQLite, a copy of them played once)."""
    driver = Driver(session_factory, random.Random(5))
    if migrated_database_url.startswith("sqlite"):
        # The test's engine has not connected yet: its file becomes the played one first.
        target = Path(make_url(migrated_database_url).database or "")
        shutil.copyfile(request.getfixturevalue("played_sqlite_file"), target)
        return driver
    await driver.play_games(GAMES)
    return driver


def standings(ops: list[dict[str, Any]]) -> list[int]:
    """Places per seat, by the README's rules, from the raw operation JSON."""
    end = ops[-1]
    count = ops[0]["player_count"]
    key: list[tuple[int, int]] = [(3, end["card_counts"][seat]) for seat in range(count)]
    group, previous = 0, -5
    for index, op in enumerate(ops):
        if op["kind"] == "player_out":
            if index != previous + 1:
                group += 1
            previous = index
            key[op["seat"]] = (2, group)
        elif op["kind"] == "player_left":
            key[op["seat"]] = (0, 0) if op["leave_reason"] == "afk" else (1, index)
    for seat in end["winners"]:
        key[seat] = (4, 0)
    return [1 + sum(other > mine for other in key) for mine in key]


async def expected_figures(uow: UnitOfWork) -> tuple[dict[Any, dict[str, Any]], dict[Any, Any]]:
    """Totals per (scope, user) and ratings, recomputed from the history rows."""
    session = uow.session
    results = list(await session.scalars(select(GameResult).order_by(GameResult.id)))
    figures: dict[tuple[int, int], dict[str, Any]] = defaultdict(lambda: defaultdict(int))
    reactions: dict[tuple[int, int], list[int]] = defaultdict(list)
    model = PlackettLuce()
    ratings: dict[tuple[int, int], Any] = {}
    points: dict[tuple[int, int], float] = {}
    for result in results:
        game = await session.get(Game, result.game_id)
        assert game is not None
        if game.status != "finished":
            continue
        rows = list(
            await session.scalars(
                select(GameOperation)
                .where(GameOperation.game_id == game.id)
                .order_by(GameOperation.seq)
            )
        )
        seats = list(
            await session.scalars(
                select(GamePlayer.user_id)
                .where(GamePlayer.game_id == game.id)
                .order_by(GamePlayer.seat)
            )
        )
        ops = [row.payload for row in rows]
        walked = {op["seat"]: op["leave_reason"] for op in ops if op["kind"] == "player_left"}
        contested = len(seats) - len(walked) >= 2
        for scope in (game.chat_id, 0):
            for seat, user in enumerate(seats):
                mine = figures[(scope, user)]
                # An uncontested game is a game (a loss) for those who walked away only.
                mine["games"] += contested or seat in walked
                mine["wins"] += contested and seat in ops[-1]["winners"]
                mine["afks"] += walked.get(seat) == "afk"
            for op in ops:
                if op["kind"] == "snap_called" and op["verdict"] == "wrong":
                    figures[(scope, seats[op["seat"]])]["wrong_calls"] += 1
                if op["kind"] == "race_resolved":
                    if len(op["winners"]) > 1:
                        for seat in op["winners"]:
                            figures[(scope, seats[seat])]["ties"] += 1
                    else:
                        mine = figures[(scope, seats[op["winners"][0]])]
                        mine["pots_won" if op["call"] == "snap_pot" else "snaps_won"] += 1
                        mine["cards_won"] += op["cards"]
            for row in rows:
                if row.kind == "snap_called" and row.payload["verdict"] == "pending":
                    assert row.reaction_ms is not None
                    assert row.user_id is not None
                    reactions[(scope, row.user_id)].append(row.reaction_ms)
            if contested:
                keys = [(scope, user) for user in seats]
                teams = [[ratings.get(key) or model.rating()] for key in keys]
                rated = model.rate(teams, ranks=standings(ops))
                for seat, (key, before, after) in enumerate(zip(keys, teams, rated, strict=True)):
                    # The README's rule: 20 points per unit of mu, a loss never up, a win
                    # never down.
                    change = 20 * (after[0].mu - before[0].mu)
                    won = seat in ops[-1]["winners"]
                    change = max(change, 0.0) if won else min(change, 0.0)
                    points[key] = points.get(key, 1000.0) + change
                ratings.update({key: team[0] for key, team in zip(keys, rated, strict=True)})
                for key in keys:
                    figures[key]["rated_games"] += 1
    for key, times in reactions.items():
        ranked = sorted(times)
        lower_median = ranked[(len(ranked) - 1) // 2]
        figures[key]["timed_calls"] = len(times)
        figures[key]["median_reaction_ms"] = int(statistics.median(times))
        figures[key]["best_reaction_ms"] = min(times)
        figures[key]["lower_median_ms"] = lower_median
        figures[key]["calls_faster_than_lower_median"] = sum(t < lower_median for t in times)
        figures[key]["reaction_counts"] = sorted(Counter(times).items())
    for key, value in points.items():
        figures[key]["rating_points"] = value
    return figures, ratings


async def assert_figures_match_the_history(sessions: async_sessionmaker[AsyncSession]) -> None:
    """Every stored total, reaction count and rating equals its recomputation."""
    async with UnitOfWork(sessions) as uow:
        expected, ratings = await expected_figures(uow)
        stored = await uow.stats.all_player_stats()
        counts = {
            (s.scope_id, s.user_id): await uow.stats.reaction_counts(s.scope_id, s.user_id)
            for s in stored
        }
    assert {(s.scope_id, s.user_id) for s in stored} == set(expected)
    assert any(s.timed_calls >= 3 for s in stored), "too few timed calls to test the median"
    for stats in stored:
        key = (stats.scope_id, stats.user_id)
        want = expected[key]
        got = {
            **stats.figures(),
            "lower_median_ms": stats.lower_median_ms,
            "calls_faster_than_lower_median": stats.calls_faster_than_lower_median,
            "reaction_counts": counts[key],
        }
        assert stats.rating_points == pytest.approx(want.get("rating_points", 1000.0), abs=1e-9)
        for name, value in got.items():
            if name.startswith("rating_"):
                continue
            default = [] if name == "reaction_counts" else 0
            if ("reaction" in name and name != "reaction_counts") or name == "lower_median_ms":
                default = None
            assert value == want.get(name, default), (*key, name)
        rating = ratings.get(key)
        if rating is not None:
            assert stats.rating_mu == pytest.approx(rating.mu, abs=1e-9)
            assert stats.rating_sigma == pytest.approx(rating.sigma, abs=1e-9)


async def test_every_figure_matches_the_history(
    played: Driver, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    await assert_figures_match_the_history(session_factory)
    async with UnitOfWork(session_factory) as uow:
        stored = await uow.stats.all_player_stats()
        statuses = set(await uow.session.scalars(select(Game.status)))
    assert statuses == {"finished", "abandoned"}, "the games should end both ways"
    assert any(s.afks for s in stored)
    assert any(s.ties for s in stored)
    # The service's own recomputation (telesnap replay's) gives exactly the stored ratings.
    async with UnitOfWork(session_factory) as uow:
        recomputed = await recompute_ratings(uow)
    assert recomputed
    for stats in stored:
        key = (stats.scope_id, stats.user_id)
        rating = recomputed.get(key)
        if stats.rated_games == 0:
            assert rating is None
            continue
        assert rating is not None
        assert (stats.rating_mu, stats.rating_sigma) == (rating.mu, rating.sigma)
        assert (stats.rating_ordinal, stats.rating_points) == (rating.ordinal, rating.points)


async def test_replays_boards_history_pages_and_exports(
    played: Driver, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    async with UnitOfWork(session_factory) as uow:
        rows = list(await uow.session.scalars(select(Game).order_by(Game.id)))
        games = [await stored_game(uow, row) for row in rows]
    assert len(games) == GAMES
    for game in games:
        document = write_document(game, ["a header line"])
        assert check_game(parse_document(document)) == []
    flipped = next(line for line in document.splitlines() if "\tcard_flipped\t" in line)
    seq, kind, payload = flipped.split("\t")
    operation = json.loads(payload)
    operation["card"] = "A♠" if operation["card"] != "A♠" else "K♠"
    tampered = document.replace(flipped, f"{seq}\t{kind}\t{json.dumps(operation)}")
    assert check_game(parse_document(tampered)) != []
    winners = document.replace('"end_reason": "', '"end_reason": "x', 1)
    assert check_game(parse_document(winners)) != []

    service = StatsService(
        UnitsOfWork(session_factory), min_games=1, min_timed_calls=1, page_size=4
    )
    totals = {place.chat_id: (await service.history(place.chat_id)).total for place in CHATS}
    chat = max(totals, key=lambda chat_id: totals[chat_id])
    board = await service.leaderboard(chat, Ranking.RATING)
    ratings = [entry.figures.rating for entry in board.entries]
    assert ratings
    assert ratings == sorted(ratings, reverse=True)
    assert all(entry.figures.rated_games >= 1 for entry in board.entries)
    fastest = await service.leaderboard(chat, Ranking.FASTEST, is_global=True)
    medians = [entry.figures.median_reaction_ms or 0 for entry in fastest.entries]
    assert medians == sorted(medians)
    first = await service.history(chat, 0)
    assert first.total >= 1
    assert len(first.games) <= 4
    ids = [
        game.game_id
        for page in range(first.pages)
        for game in (await service.history(chat, page)).games
    ]
    assert len(ids) == first.total == len(set(ids))
    async with UnitOfWork(session_factory) as uow:
        ended = [result.game_id for result in await uow.stats.results_in_end_order(chat)]
    assert ids == list(reversed(ended))  # the game that ended last comes first
    exported = await service.export_chat(chat)
    assert [g["game_id"] for g in exported["games"]] == list(reversed(ids))
    assert {p["user_id"] for p in exported["players"]}


async def test_the_history_lists_games_in_the_order_they_ended(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    driver = Driver(session_factory, random.Random(7))
    chat = CHATS[0]
    await driver.settings.change(chat, PLAYERS[0], "flip_limit", "40", is_admin=known_admin(True))
    early = Place(chat.chat_id, thread_id=1, chat_type="supergroup", is_forum=True)
    late = Place(chat.chat_id, thread_id=2, chat_type="supergroup", is_forum=True)
    first_started = await driver.start_one(early, [PLAYERS[0], PLAYERS[1]])
    second_started = await driver.start_one(late, [PLAYERS[2], PLAYERS[3]])
    await driver.finish_one(late, [PLAYERS[2], PLAYERS[3]])
    await driver.finish_one(early, [PLAYERS[0], PLAYERS[1]])
    page = await StatsService(UnitsOfWork(session_factory)).history(chat.chat_id)
    assert first_started < second_started
    assert [line.game_id for line in page.games] == [first_started, second_started]


async def figures_and_timelines(sessions: async_sessionmaker[AsyncSession]) -> dict[Any, Any]:
    """Every stored total, and every player's rating timeline in each scope."""
    async with UnitOfWork(sessions, read_only=True) as uow:
        return {
            (s.scope_id, s.user_id): (
                s.figures(),
                await uow.stats.rating_timeline(s.user_id, s.scope_id or None),
            )
            for s in await uow.stats.all_player_stats()
        }


async def downgrade(url: str, revision: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(
                lambda sync: command.downgrade(alembic_config(connection=sync), revision)
            )
    finally:
        await engine.dispose()


async def test_an_upgraded_database_shows_the_figures_of_its_history(
    migrated_database_url: str,
) -> None:
    """Games stored before the reaction counts existed get them, and exact medians, on upgrade."""
    url = migrated_database_url
    engine = create_engine(url)
    try:
        sessions = make_session_factory(engine)
        driver = Driver(sessions, random.Random(5))
        await driver.play_games(GAMES)
        before = await figures_and_timelines(sessions)
        assert sum(bool(timeline) for _, timeline in before.values()) >= 4
    finally:
        await engine.dispose()
    before_counts = ScriptDirectory.from_config(alembic_config()).get_revision(REACTION_COUNTS)
    assert before_counts is not None
    assert isinstance(before_counts.down_revision, str)
    await downgrade(url, before_counts.down_revision)
    assert "reaction_counts" not in await table_names(url)
    await upgrade_database(url)
    engine = create_engine(url)
    try:
        sessions = make_session_factory(engine)
        assert await figures_and_timelines(sessions) == before
        await assert_figures_match_the_history(sessions)
        # Games ended after the upgrade move the median on from the counts filled in.
        later = Driver(
            sessions, random.Random(6), clock_ms=10**9, update_ids=itertools.count(10**6)
        )
        await later.play_games(GAMES)
        await assert_figures_match_the_history(sessions)
    finally:
        await engine.dispose()


async def test_stats_reads_never_wait_for_the_write_lock(
    played: Driver, engine: AsyncEngine, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    """/stats, /leaderboard, /history, /replay, export and /settings while a writer holds SQLite."""
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write lock")
    assert engine.url.database
    service = StatsService(UnitsOfWork(session_factory))
    chat = CHATS[0].chat_id
    writer = sqlite3.connect(engine.url.database, timeout=0, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM player_stats")  # uncommitted: the reads must not see it
        view = await service.player(chat, PLAYERS[0].user_id, "Ann")
        board = await service.leaderboard(chat, Ranking.RATING, is_global=True)
        page = await service.history(chat)
        replay = await service.replay(chat, page.games[0].game_id)
        exported = await service.export_chat(chat)
        shown = await played.settings.show(CHATS[0])
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert view.chat is not None
    assert view == await service.player(chat, PLAYERS[0].user_id, "Ann")
    assert page.total >= 1
    assert replay.text.startswith("# telesnap game")
    assert exported["players"]
    assert board.unlisted + len(board.entries) >= 1
    assert shown.flip_limit == 40


async def test_the_rating_chart_of_a_long_career_shows_its_last_games(
    played: Driver, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    chat = CHATS[0].chat_id
    async with UnitOfWork(session_factory) as uow:
        stored = await uow.stats.all_player_stats(0)
        await uow.settings.save_values(chat, 0, {"shared_stats": True})  # ratings across chats
    veteran = max(stored, key=lambda stats: stats.rated_games)
    assert veteran.rated_games >= 4
    whole = await StatsService(UnitsOfWork(session_factory)).player(chat, veteran.user_id, "?")
    recent = await StatsService(UnitsOfWork(session_factory), rating_points=3).player(
        chat, veteran.user_id, "?"
    )
    assert len(whole.ratings) == veteran.rated_games
    assert whole.ratings_from == 1
    assert whole.ratings[-1] == pytest.approx(veteran.rating_points)
    assert recent.ratings == whole.ratings[-3:]
    assert recent.ratings_from == veteran.rated_games - 2
    assert len(recent.chat_ratings) == min(3, len(whole.chat_ratings))
    assert recent.chat_ratings == whole.chat_ratings[-3:]


async def test_the_chat_rating_line_sits_at_those_games_among_all_chats(
    played: Driver, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    """Beside the all-chats line, each game here is plotted at its number among all chats."""
    chat = CHATS[0].chat_id
    async with UnitOfWork(session_factory) as uow:
        await uow.settings.save_values(chat, 0, {"shared_stats": True})  # ratings across chats
        results = (
            await uow.session.execute(
                select(GamePlayerResult.user_id, GameResult.chat_id)
                .join(GameResult, GameResult.id == GamePlayerResult.result_id)
                .where(GameResult.rated.is_(True))
                .order_by(GamePlayerResult.result_id)
            )
        ).all()
    chats_of: dict[int, list[int]] = defaultdict(list)
    for user_id, chat_id in results:
        chats_of[user_id].append(chat_id)
    # Someone whose games here are not all of their games, and not their first ones.
    user_id = next(
        user
        for user, chats in chats_of.items()
        if chat in chats and chats.index(chat) > 0 and set(chats) != {chat}
    )
    view = await StatsService(UnitsOfWork(session_factory)).player(chat, user_id, "?")
    numbers_here = [n for n, chat_id in enumerate(chats_of[user_id], start=1) if chat_id == chat]
    assert len(view.ratings) == len(chats_of[user_id])
    assert view.chat_rating_games == tuple(numbers_here)
    assert len(view.chat_ratings) == len(numbers_here)
