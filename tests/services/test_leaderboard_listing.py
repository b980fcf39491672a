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
    sessions: async_sessionmaker[AsyncSession],
    thread_id: int,
    *,
    contested: bool,
    players: tuple[tuple[int, str], tuple[int, str]] = ((ANN, "Ann"), (BOB, "Bob")),
) -> None:
    """An ended game of two players, the first the winner; uncontested: it counts but is not
    rated."""
    async with UnitOfWork(sessions) as uow:
        for user_id, name in players:
            await uow.users.upsert(user_id, name)
        await uow.chats.upsert(CHAT, "group")
        row = await uow.games.add(CHAT, thread_id, creator_id=players[0][0])
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
        await record_summary(uow, row, summary, [user_id for user_id, _ in players])


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
    for first in range(1, players + 1, 2):  # everyone plays one game, the last one twice
        second = first + 1 if first < players else 1
        pair = ((first, f"Player {first}"), (second, f"Player {second}"))
        await record_game(session_factory, first, contested=True, players=pair)
    service = StatsService(UnitsOfWork(session_factory))
    board = await service.leaderboard(CHAT, ranking)
    assert len(board.entries) == BOARD_SIZE
    shown = render_leaderboard(board, translator("en"))
    assert f"…and {players - BOARD_SIZE} more players" in shown
