"""A manager's action asks for what it needs up front and runs once.

The game's creator is never asked about; anyone else is asked once whether they
are a chat admin, before the change takes the topic's lock; a refusal changes nothing.
"""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.play.lobby import LobbyService
from telesnap.services.play.managers import AdminCheck, ManagerCheck
from telesnap.services.play.store import GameStore
from telesnap.services.types import Reason, Refused
from telesnap.storage.uow import UnitsOfWork

from .test_play_flow import ANN, BOB, CID, PLACE, receipt


class Asked:
    """An admin check that answers ``answer`` and counts how often it was asked."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.times = 0

    def check(self) -> AdminCheck:
        async def is_admin() -> bool:
            self.times += 1
            return self.answer

        return is_admin


async def lobby_of_two(sessions: async_sessionmaker[AsyncSession]) -> LobbyService:
    lobby = LobbyService(UnitsOfWork(sessions), GameStore(), shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    return lobby


async def test_the_creator_starts_without_being_asked(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby = await lobby_of_two(session_factory)
    asked = Asked(False)
    started = await lobby.start(PLACE, ANN, is_admin=asked.check(), receipt=receipt())
    assert started.lobby.status == "running"
    assert asked.times == 0


async def test_an_admin_is_asked_once_and_the_action_runs_once(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby = await lobby_of_two(session_factory)
    asked = Asked(True)
    ended = await lobby.end(PLACE, BOB, is_admin=asked.check(), receipt=receipt())
    assert ended is None, "the lobby was called off"
    assert asked.times == 1
    with pytest.raises(Refused) as refused:
        await lobby.lobby(PLACE)
    assert refused.value.reason is Reason.NO_GAME


async def test_a_plain_player_is_refused_and_nothing_changes(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby = await lobby_of_two(session_factory)
    asked = Asked(False)
    for manage in (
        lambda: lobby.start(PLACE, BOB, is_admin=asked.check(), receipt=receipt()),
        lambda: lobby.end(PLACE, BOB, is_admin=asked.check(), receipt=receipt()),
        lambda: lobby.kick(PLACE, BOB, ANN.user_id, is_admin=asked.check(), receipt=receipt()),
    ):
        with pytest.raises(Refused) as refused:
            await manage()
        assert refused.value.reason is Reason.NOT_CREATOR
    assert asked.times == 3, "each action asked once"
    still = await lobby.lobby(PLACE)
    assert (still.status, still.player_names) == ("lobby", ("Ann", "Bob"))


async def test_nobody_is_asked_about_a_game_that_is_not_there(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    lobby = LobbyService(UnitsOfWork(session_factory), GameStore())
    asked = Asked(True)
    with pytest.raises(Refused) as refused:
        await lobby.end(PLACE, BOB, is_admin=asked.check(), receipt=receipt())
    assert refused.value.reason is Reason.NO_GAME
    assert asked.times == 0


async def test_the_check_keeps_its_answer_and_never_asks_about_the_creator() -> None:
    asked = Asked(True)
    manager = ManagerCheck(ANN.user_id, asked.check())
    assert await manager.may_manage(ANN.user_id)
    assert asked.times == 0
    assert await manager.may_manage(BOB.user_id)
    assert await manager.may_manage(BOB.user_id)
    assert asked.times == 1


async def test_a_creator_who_leaves_a_running_game_hands_it_on(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Who left no longer runs the game: the next player still in it may stop it, they may not."""
    lobby = await lobby_of_two(session_factory)
    await lobby.join(PLACE, CID, receipt())
    await lobby.start(PLACE, ANN, is_admin=Asked(False).check(), receipt=receipt())
    await lobby.leave(PLACE, ANN, receipt())
    with pytest.raises(Refused) as refused:
        await lobby.kick(PLACE, ANN, CID.user_id, is_admin=Asked(False).check(), receipt=receipt())
    assert refused.value.reason is Reason.NOT_CREATOR
    asked = Asked(False)
    await lobby.end(PLACE, BOB, is_admin=asked.check(), receipt=receipt())
    assert asked.times == 0, "Bob runs the game now"
    with pytest.raises(Refused) as ended:
        await lobby.lobby(PLACE)
    assert ended.value.reason is Reason.NO_GAME


async def test_removing_a_player_who_left_already_says_they_are_not_in_the_game(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Not "You are not playing in this game": the manager who asks is playing."""
    lobby = LobbyService(UnitsOfWork(session_factory), GameStore(), shuffle_seed=3)
    await lobby.open(PLACE, ANN, receipt())
    await lobby.join(PLACE, BOB, receipt())
    await lobby.join(PLACE, CID, receipt())
    creator = Asked(False).check()
    await lobby.start(PLACE, ANN, is_admin=creator, receipt=receipt())
    await lobby.kick(PLACE, ANN, BOB.user_id, is_admin=creator, receipt=receipt())
    with pytest.raises(Refused) as refused:
        await lobby.kick(PLACE, ANN, BOB.user_id, is_admin=creator, receipt=receipt())
    assert refused.value.reason is Reason.TARGET_NOT_PLAYING


async def test_a_refused_manager_action_names_who_runs_the_game_now(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """The creator left and came back: Bob runs the lobby now, and Ann is told so."""
    lobby = await lobby_of_two(session_factory)
    await lobby.join(PLACE, CID, receipt())
    await lobby.leave(PLACE, ANN, receipt())
    await lobby.join(PLACE, ANN, receipt())
    with pytest.raises(Refused) as refused:
        await lobby.start(PLACE, ANN, is_admin=Asked(False).check(), receipt=receipt())
    assert refused.value.reason is Reason.NOT_CREATOR
    assert refused.value.details["name"] == BOB.first_name
