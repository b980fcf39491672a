"""A game stored in an earlier history format plays on, and reloads with its newer moves."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.game import Game, operation_from_json
from telesnap.game.operations import FORMAT_KEY, HISTORY_FORMAT
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.services.settings import GameSettings
from telesnap.services.types import Actor, Place, Receipt
from telesnap.storage.models import GameOperation, GameStatus
from telesnap.storage.uow import UnitOfWork, UnitsOfWork

FORMAT_1 = Path(__file__).parents[1] / "game" / "fixtures" / "history_format_1.tsv"
PLACE = Place(chat_id=-400, chat_type="group")
USERS = (101, 102, 103, 104)


def running_prefix() -> list[dict[str, object]]:
    """The format-1 fixture's operations up to a moment when the game runs, with no race."""
    payloads = [
        json.loads(line.split("\t", 2)[2])
        for line in FORMAT_1.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    for end in range(len(payloads) // 2, len(payloads)):
        game = Game.replay(operation_from_json(payload) for payload in payloads[:end])
        if payloads[end - 1]["kind"] == "card_flipped" and not game.is_race_open:
            return payloads[:end]
    raise AssertionError("the fixture has no flip to stop at")


async def store_running_game(
    sessions: async_sessionmaker[AsyncSession], payloads: list[dict[str, object]]
) -> None:
    async with UnitOfWork(sessions) as uow:
        await uow.chats.upsert(PLACE.chat_id, PLACE.chat_type)
        for user_id in USERS:
            await uow.users.upsert(user_id, f"P{user_id}")
        row = await uow.games.add(PLACE.chat_id, PLACE.thread_id, creator_id=USERS[0])
        for user_id in USERS:
            await uow.games.add_player(row.id, user_id)
        row.status = GameStatus.RUNNING.value
        row.settings = GameSettings.from_values({}).to_values()
        # Written as an older telesnap wrote them (the history repository writes today's format).
        stored = [
            {"game_id": row.id, "seq": seq, "kind": str(payload["kind"]), "payload": payload}
            for seq, payload in enumerate(payloads, start=1)
        ]
        await uow.session.execute(insert(GameOperation), stored)
        row.history_length = len(stored)


async def test_a_game_stored_in_format_1_plays_on_and_reloads(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    payloads = running_prefix()
    await store_running_game(session_factory, payloads)
    play = PlayService(UnitsOfWork(session_factory), GameStore())
    table = (await play.table(PLACE)).table
    turn = table.turn_player
    assert turn is not None
    receipt = Receipt(0, datetime.now(UTC), update_id=1)
    flipped = await play.flip(PLACE, Actor(turn.user_id, turn.name), receipt)
    assert flipped.table.flips == table.flips + 1
    async with UnitOfWork(session_factory) as uow:
        rows = await uow.history.load(table.game_id)
    formats = [row.payload.get(FORMAT_KEY, 1) for row in rows]
    assert formats == [1] * len(payloads) + [HISTORY_FORMAT] * (len(rows) - len(payloads))
    # Another process reads the mixed history back to the same table.
    reloaded = await PlayService(UnitsOfWork(session_factory), GameStore()).table(PLACE)
    assert reloaded.table == flipped.table
