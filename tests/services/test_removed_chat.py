"""The bot removed from a chat: every game there ends, in every topic, and its timers go."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.types import Place
from telesnap.storage.models import Game, GameOperation, Timer

from .test_timer_failures import BROKEN, CID, DAN, break_history, start_in
from .test_timers import ANN, BOB, Clock, World, receipt

LOBBY_TOPIC = Place(chat_id=BROKEN.chat_id, thread_id=5, chat_type="supergroup", is_forum=True)
OTHER_CHAT = Place(chat_id=-999, chat_type="group", title="Elsewhere")


async def statuses(sessions: async_sessionmaker[AsyncSession]) -> dict[tuple[int, int], str]:
    async with sessions() as session:
        rows = await session.execute(select(Game.chat_id, Game.thread_id, Game.status))
        return {(chat, thread): status for chat, thread, status in rows}


async def unfired_timers(sessions: async_sessionmaker[AsyncSession], chat_id: int) -> int:
    async with sessions() as session:
        statement = select(func.count()).where(Timer.chat_id == chat_id, Timer.fired_at.is_(None))
        return int(await session.scalar(statement) or 0)


async def test_removing_the_bot_ends_the_chats_games_and_only_those(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    world = World(session_factory, Clock())
    running = await start_in(world, BROKEN, ANN, BOB)
    await world.lobby.open(LOBBY_TOPIC, CID, receipt())
    await start_in(world, OTHER_CHAT, CID, DAN)
    assert await unfired_timers(session_factory, BROKEN.chat_id) > 0

    ended = await world.lobby.end_in_removed_chat(BROKEN.chat_id)

    assert len(ended) == 2
    assert running in ended
    assert await statuses(session_factory) == {
        (BROKEN.chat_id, 0): "abandoned",
        (BROKEN.chat_id, 5): "cancelled",
        (OTHER_CHAT.chat_id, 0): "running",
    }
    assert await unfired_timers(session_factory, BROKEN.chat_id) == 0
    assert await unfired_timers(session_factory, OTHER_CHAT.chat_id) > 0
    async with session_factory() as session:
        last = await session.scalar(
            select(GameOperation.kind)
            .where(GameOperation.game_id == running)
            .order_by(GameOperation.seq.desc())
            .limit(1)
        )
    assert last == "game_ended", "the abandonment is recorded in the history"
    assert await world.lobby.end_in_removed_chat(BROKEN.chat_id) == []


async def test_a_game_that_cannot_be_rebuilt_still_ends_when_the_bot_is_removed(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    world = World(session_factory, clock)
    game_id = await start_in(world, BROKEN, ANN, BOB)
    await break_history(session_factory, game_id)
    restarted = World(session_factory, clock)
    assert await restarted.lobby.end_in_removed_chat(BROKEN.chat_id) == [game_id]
    assert (await statuses(session_factory))[(BROKEN.chat_id, 0)] == "abandoned"
    assert await unfired_timers(session_factory, BROKEN.chat_id) == 0
