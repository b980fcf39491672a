"""A game the others walk out of: the one who stayed loses nothing, the leavers lose it."""

from __future__ import annotations

import random

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.bot.render.i18n import translator
from telesnap.bot.render.stats import render_leaderboard, render_player_stats
from telesnap.services.stats.service import StatsService
from telesnap.services.stats.views import Ranking
from telesnap.services.types import Actor, Refused
from telesnap.storage.uow import UnitsOfWork

from ..admin import known_admin
from .stats_games import CHATS, Driver

PLACE = CHATS[0]
ANN, BOB, CID = Actor(10, "Ann"), Actor(11, "Bob"), Actor(12, "Cid")
ENGLISH = translator("en")


async def walked_out_of(driver: Driver, seated: list[Actor], leavers: list[Actor]) -> None:
    """A game of ``seated`` that ``leavers`` leave, one after the other, until it ends."""
    await driver.start_one(PLACE, seated)
    for leaver in leavers:
        await driver.lobby.leave(PLACE, leaver, driver.receipt())


async def played_to_the_flip_limit(driver: Driver, seated: list[Actor]) -> None:
    """A game nobody snaps in: the flip limit ends it with equal cards, a win each."""
    await driver.start_one(PLACE, seated)
    for _ in range(200):
        try:
            table = (await driver.play.table(PLACE)).table
        except Refused:  # the game is over
            return
        turn = table.turn_player
        assert turn is not None
        actor = next(actor for actor in seated if actor.user_id == turn.user_id)
        await driver.play.flip(PLACE, actor, driver.receipt(30))
    raise AssertionError("the flip limit did not end the game")


async def test_staying_in_a_game_others_walk_out_of_costs_the_stayer_nothing(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    driver = Driver(session_factory, random.Random(3))
    await driver.settings.change(PLACE, ANN, "flip_limit", "10", is_admin=known_admin(True))
    await walked_out_of(driver, [ANN, BOB], [BOB])
    await played_to_the_flip_limit(driver, [ANN, BOB])
    await walked_out_of(driver, [ANN, BOB, CID], [BOB, CID])
    service = StatsService(UnitsOfWork(session_factory))
    history = await service.history(PLACE.chat_id)
    assert [game.winners for game in history.games] == [("Ann",), ("Ann", "Bob"), ("Ann",)]

    ann = render_player_stats(await service.player(PLACE.chat_id, ANN.user_id, "Ann"), ENGLISH)
    assert "1 game · 1 win (100%)" in ann
    bob = render_player_stats(await service.player(PLACE.chat_id, BOB.user_id, "Bob"), ENGLISH)
    assert "3 games · 1 win (33%)" in bob, "walking away is a game and a loss"
    cid = render_player_stats(await service.player(PLACE.chat_id, CID.user_id, "Cid"), ENGLISH)
    assert "1 game · 0 wins (0%)" in cid

    board = render_leaderboard(await service.leaderboard(PLACE.chat_id, Ranking.WINS), ENGLISH)
    assert "<b>Ann</b> — 1 win in 1 game" in board
    assert "<b>Bob</b> — 1 win in 3 games" in board
