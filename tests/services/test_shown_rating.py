"""The rating players are shown: from 1000, never up after a loss, never down after a win."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import EndReason
from telesnap.services.stats.figures import (
    RATING_BASELINE,
    GameSummary,
    Rating,
    SeatFigures,
    initial_rating,
    rate_game,
)
from telesnap.services.stats.recorder import record_summary
from telesnap.services.stats.service import StatsService
from telesnap.services.stats.views import Ranking
from telesnap.storage.models.base import utc_now
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

CHAT = -700
ANN, BOB, CID = 1, 2, 3

ratings = st.builds(
    Rating,
    mu=st.floats(0, 50, allow_nan=False),
    sigma=st.floats(0.5, 25 / 3, allow_nan=False),
    points=st.floats(0, 3000, allow_nan=False),
)


@st.composite
def rated_games(draw: st.DrawFn) -> tuple[list[Rating], list[int]]:
    """Players' ratings before a game and the places they finish in (1: the winners)."""
    players = draw(st.integers(2, 6))
    before = draw(st.lists(ratings, min_size=players, max_size=players))
    # Place 1 is held by the winners only; the others share places below it.
    losers_places = draw(st.lists(st.integers(2, players), min_size=players, max_size=players))
    winners = draw(st.sets(st.integers(0, players - 1), min_size=1, max_size=players - 1))
    places = [1 if seat in winners else losers_places[seat] for seat in range(players)]
    return before, [1 + sum(other < place for other in places) for place in places]


@settings(max_examples=300, deadline=None)
@given(rated_games())
def test_a_loss_never_raises_the_shown_rating_and_a_win_never_lowers_it(
    game: tuple[list[Rating], list[int]],
) -> None:
    before, places = game
    after = rate_game(before, places)
    for place, old, new in zip(places, before, after, strict=True):
        if place == 1:
            assert new.points >= old.points
        else:
            assert new.points <= old.points


def test_the_shown_rating_follows_the_skill_estimate_in_two_player_games() -> None:
    winner, loser = rate_game([initial_rating(), initial_rating()], [1, 2])
    assert winner.points > RATING_BASELINE > loser.points
    assert winner.points - RATING_BASELINE == pytest.approx(20 * (winner.mu - 25))
    assert RATING_BASELINE - loser.points == pytest.approx(20 * (25 - loser.mu))


async def record_three_player_game(
    sessions: async_sessionmaker[AsyncSession], thread_id: int, places: tuple[int, int, int]
) -> None:
    """An ended, rated game of Ann, Bob and Cid with these places (1: the winner)."""
    async with UnitOfWork(sessions) as uow:
        for user_id, name in ((ANN, "Ann"), (BOB, "Bob"), (CID, "Cid")):
            await uow.users.upsert(user_id, name)
        await uow.chats.upsert(CHAT, "group")
        row = await uow.games.add(CHAT, thread_id, creator_id=ANN)
        row.status = "finished"
        row.ended_at = utc_now()
        summary = GameSummary(
            reason=EndReason.LIMIT,
            winners=tuple(seat for seat, place in enumerate(places) if place == 1),
            flips=30,
            seats=tuple(SeatFigures(seat) for seat in range(3)),
            places=places,
            operations=40,
        )
        await record_summary(uow, row, summary, [ANN, BOB, CID])


async def test_a_player_who_lost_both_games_is_not_shown_a_higher_rating(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Ann finishes second of three twice: losses, though OpenSkill's ordinal rises."""
    for thread_id in (1, 2):
        await record_three_player_game(session_factory, thread_id, (2, 1, 3))
    service = StatsService(UnitsOfWork(session_factory))
    ann = await service.player(CHAT, ANN, "Ann")
    assert ann.chat is not None
    assert ann.chat.wins == 0
    assert ann.chat.mu - 3 * ann.chat.sigma > 0, "the ordinal rose after losses"
    assert ann.chat.rating == RATING_BASELINE
    assert ann.chat_ratings == (RATING_BASELINE, RATING_BASELINE)
    bob = await service.player(CHAT, BOB, "Bob")
    cid = await service.player(CHAT, CID, "Cid")
    assert bob.chat is not None
    assert cid.chat is not None
    assert bob.chat_ratings[0] > RATING_BASELINE
    assert bob.chat_ratings[1] > bob.chat_ratings[0]
    assert cid.chat_ratings[1] < cid.chat_ratings[0] < RATING_BASELINE
    board = await service.leaderboard(CHAT, Ranking.RATING)
    assert [entry.name for entry in board.entries] == ["Bob", "Ann", "Cid"]
    assert board.provisional, "two games each: nobody has the five to be listed for good"
