"""Who may manage a topic's game: its creator, or one of the chat's admins.

The admin check is asked only when the actor is not the creator, at most once per action,
and before the topic's lock where possible, so no transaction waits on the answer. A creator
who leaves hands the game on (:func:`hand_on_lobby`, :func:`hand_on_running`): else those
still in could not start or stop it, and would wait for an admin.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ...game import Game, SeatStatus
from ...storage.models import Game as GameRow
from ...storage.uow import UnitOfWork

AdminCheck = Callable[[], Awaitable[bool]]
"""Answers whether the acting user is one of the chat's admins (the bot asks Telegram)."""


class ManagerCheck:
    """Whether one actor may manage a game: the creator, or an admin (asked at most once)."""

    def __init__(self, actor_id: int, is_admin: AdminCheck) -> None:
        self._actor_id = actor_id
        self._is_admin = is_admin
        self._answer: bool | None = None

    async def may_manage(self, creator_id: int) -> bool:
        """Whether the actor may manage a game whose creator is ``creator_id``."""
        if creator_id == self._actor_id:
            return True
        if self._answer is None:
            self._answer = await self._is_admin()
        return self._answer


async def hand_on_lobby(uow: UnitOfWork, row: GameRow) -> bool:
    """Whether anyone is left in the lobby; if its creator is not, who joined first takes over."""
    players = await uow.games.list_players(row.id)
    if players and row.creator_id not in {player.user_id for player in players}:
        row.creator_id = players[0].user_id
    return bool(players)


def hand_on_running(row: GameRow, game: Game, user_ids: Sequence[int]) -> None:
    """A creator who left a running game no longer runs it: the first player still in does."""
    gone = {
        user_ids[seat] for seat, held in enumerate(game.seats) if held.status is SeatStatus.LEFT
    }
    still_in = [user_ids[seat] for seat in game.active_seats()]
    if row.creator_id in gone and still_in:
        row.creator_id = still_in[0]
