"""Who a leaderboard lists: 5 rated games (fastest: 5 timed calls), on every board alike."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.bot.render.i18n import translator
from telesnap.bot.render.stats import render_leaderboard
from telesnap.game import EndReason
from telesnap.services.stats.figures import GameSummary, SeatFigures
from telesnap.services.stats.recorder import record_summary
from telesnap.services.stats.service import BOARD_SIZE, StatsService
from telesnap.services.stats.views import Ranking
from telesnap.storage.models.base import utc_now
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

CHAT = -710
ANN, BOB = 1, 2


async def record_game(
    sessions: async_sessionmaker[AsyncSession], thread_id: int, *, contested: bool
) -> None:
    """An ended game of Ann (the winner) and Bob; uncontested: it counts but is not rated."""
    async with UnitOfWork(sessions) as uow:
        for user_id, name in ((ANN, "Ann"), (BOB, "Bob")):
            await uow.users.upsert(user_id, name)
        await uow.chats.upsert(CHAT, "group")
        row = await uow.games.add(CHAT, thread_id, creator_id=ANN)
        row.status = "finished"
        row.ended_at = utc_now()
        summary = GameSummary(
            reason=EndReason.LIMIT,
            winners=(0,),
            flips=30,
            seats=(SeatFigures(0, snaps_won=1), SeatFigures(1)),
            places=(1, 2),
            operations=40,
            contested=contested,
        )
        await record_summary(uow, row, summary, [ANN, BOB])


@pytest.mark.parametrize("ranking", [Ranking.RATING, Ranking.WINS, Ranking.SNAPS])
async def test_five_games_of_which_four_rated_leave_every_board_provisional(
    session_factory: async_sessionmaker[AsyncSession], ranking: Ranking
) -> None:
    for thread_id in range(4):
        await record_game(session_factory, thread_id, contested=True)
    await record_game(session_factory, 4, contested=False)
    service = StatsService(UnitsOfWork(session_factory))
    board = await service.leaderboard(CHAT, ranking)
    assert board.provisional, "nobody has 5 rated games"
    assert [entry.name for entry in board.entries] == ["Ann", "Bob"]
    assert board.unlisted == 0


@pytest.mark.parametrize("ranking", [Ranking.RATING, Ranking.WINS, Ranking.SNAPS])
async def test_with_five_rated_games_the_listed_are_not_also_counted_as_unlisted(
    session_factory: async_sessionmaker[AsyncSession], ranking: Ranking
) -> None:
    for thread_id in range(5):
        await record_game(session_factory, thread_id, contested=True)
    service = StatsService(UnitsOfWork(session_factory))
    board = await service.leaderboard(CHAT, ranking)
    assert not board.provisional
    assert len(board.entries) == 2
    assert board.unlisted == 0


@pytest.mark.parametrize("ranking", [Ranking.RATING, Ranking.WINS, Ranking.SNAPS])
async def test_a_board_says_how_many_more_players_are_ranked_below_its_rows(
    session_factory: async_sessionmaker[AsyncSession], ranking: Ranking
) -> None:
    players = BOARD_SIZE + 3
    async with UnitOfWork(session_factory) as uow:
        await uow.chats.upsert(CHAT, "group")
        for user_id in range(1, players + 1):
            await uow.users.upsert(user_id, f"Player {user_id}")
    for first in range(1, players + 1, 2):  # everyone plays one game, the last one twice
        second = first + 1 if first < players else 1
        async with UnitOfWork(session_factory) as uow:
            row = await uow.games.add(CHAT, first, creator_id=first)
            row.status = "finished"
            row.ended_at = utc_now()
            summary = GameSummary(
                reason=EndReason.LIMIT,
                winners=(0,),
                flips=30,
                seats=(SeatFigures(0, snaps_won=1), SeatFigures(1)),
                places=(1, 2),
                operations=40,
            )
            await record_summary(uow, row, summary, [first, second])
    service = StatsService(UnitsOfWork(session_factory))
    board = await service.leaderboard(CHAT, ranking)
    assert len(board.entries) == BOARD_SIZE
    shown = render_leaderboard(board, translator("en"))
    assert f"…and {players - BOARD_SIZE} more players" in shown
