"""Games and their players. Reads meant for a change lock the game row first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ..errors import ActiveGameExistsError, PlayerAlreadySeatedError
from ..models import ACTIVE_STATUSES, Game, GamePlayer, GameStatus, fits_bigint
from ..models.accounts import WHOLE_CHAT

__all__ = ["GameRepository"]


def _locked(statement: Select[Game], lock: bool) -> Select[Game]:
    """Lock with ``FOR UPDATE``, refreshing held copies (SQLite: ``BEGIN IMMEDIATE`` serialises)."""
    if not lock:
        return statement
    return statement.with_for_update().execution_options(populate_existing=True)


_ACTIVE_IN_TOPIC = select(Game).where(
    Game.chat_id == bindparam("chat_id"),
    Game.thread_id == bindparam("thread_id"),
    Game.status.in_([status.value for status in ACTIVE_STATUSES]),
)
"""The topic's lobby or running game: built once, it runs on every press."""
_ACTIVE_IN_TOPIC_LOCKED = _locked(_ACTIVE_IN_TOPIC, True)


class GameRepository:
    """Games, one active (lobby or running) game at most per chat topic, and their seats."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def find_active(
        self, chat_id: int, thread_id: int = WHOLE_CHAT, *, lock: bool = True
    ) -> Game | None:
        """Return the chat topic's game in lobby or running, locked for this transaction."""
        statement = _ACTIVE_IN_TOPIC_LOCKED if lock else _ACTIVE_IN_TOPIC
        return await self._session.scalar(statement, {"chat_id": chat_id, "thread_id": thread_id})

    async def get(self, game_id: int, *, lock: bool = True) -> Game | None:
        """Return the game by id, locked for this transaction, or None."""
        if not fits_bigint(game_id):
            return None
        return await self._session.scalar(_locked(select(Game).where(Game.id == game_id), lock))

    async def add(
        self,
        chat_id: int,
        thread_id: int,
        creator_id: int,
        settings: dict[str, Any] | None = None,
    ) -> Game:
        """Open a new game in its lobby; raise :class:`ActiveGameExistsError` if one is active.

        Upsert the chat and the creator first; the game has its id on return.
        """
        game = Game(
            chat_id=chat_id,
            thread_id=thread_id,
            creator_id=creator_id,
            status=GameStatus.LOBBY.value,
            settings=dict(settings or {}),
        )
        try:
            async with self._session.begin_nested():
                self._session.add(game)
        except IntegrityError:
            if await self.find_active(chat_id, thread_id, lock=False) is not None:
                raise ActiveGameExistsError(chat_id, thread_id) from None
            raise
        return game

    async def list_active_in_chat(self, chat_id: int) -> list[Game]:
        """Return the chat's games in lobby or running, in every topic (not locked)."""
        statement = (
            select(Game)
            .where(
                Game.chat_id == chat_id,
                Game.status.in_([status.value for status in ACTIVE_STATUSES]),
            )
            .order_by(Game.id)
        )
        return list(await self._session.scalars(statement))

    async def list_running(self) -> list[Game]:
        """Return every running game, oldest first (to resume them after a restart)."""
        statement = select(Game).where(Game.status == GameStatus.RUNNING.value).order_by(Game.id)
        return list(await self._session.scalars(statement))

    async def list_players(self, game_id: int) -> list[GamePlayer]:
        """Return the game's players in seat order (join order).

        Seats may have gaps after lobby departures: the engine's seat ``i`` is the ``i``-th here.
        """
        statement = (
            select(GamePlayer)
            .where(GamePlayer.game_id == game_id)
            .order_by(GamePlayer.seat)
            .execution_options(populate_existing=True)
        )
        return list(await self._session.scalars(statement))

    async def get_player(self, game_id: int, user_id: int) -> GamePlayer | None:
        """Return the user's seat in the game, or None."""
        statement = select(GamePlayer).where(
            GamePlayer.game_id == game_id, GamePlayer.user_id == user_id
        )
        return await self._session.scalar(statement)

    async def add_player(self, game_id: int, user_id: int) -> GamePlayer:
        """Seat the user after the last seat; raise :class:`PlayerAlreadySeatedError` if seated.

        Lock the game first (``get``/``find_active``) so concurrent joins get distinct seats.
        """
        if await self.get_player(game_id, user_id) is not None:
            raise PlayerAlreadySeatedError(game_id, user_id)
        last_seat = await self._session.scalar(
            select(func.max(GamePlayer.seat)).where(GamePlayer.game_id == game_id)
        )
        player = GamePlayer(
            game_id=game_id, seat=0 if last_seat is None else last_seat + 1, user_id=user_id
        )
        self._session.add(player)
        await self._session.flush()
        return player

    async def remove_player(self, game_id: int, user_id: int) -> bool:
        """Take the user's seat away (a lobby departure); False if they had none.

        Players who leave a running game keep their seat: set ``left_at`` instead.
        """
        player = await self.get_player(game_id, user_id)
        if player is None:
            return False
        await self._session.delete(player)
        await self._session.flush()
        return True

    async def count_players(self, game_id: int) -> int:
        """Return how many seats the game has."""
        statement = (
            select(func.count()).select_from(GamePlayer).where(GamePlayer.game_id == game_id)
        )
        return int(await self._session.scalar(statement) or 0)
