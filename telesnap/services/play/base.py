"""What every service shares: the unit of work under the topic's lock, and error mapping."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from ...game import Operation, PlayerLeft, SnapError
from ...storage.models import Game as GameRow
from ...storage.models import GameStatus
from ...storage.uow import UnitOfWork
from ..ports import UnitOfWorkFactory
from ..types import Actor, Place, Reason, Receipt, Refused
from .managers import hand_on_running
from .store import GameStore, LoadedGame

T = TypeVar("T")


def refusal_for(error: SnapError) -> Refused:
    """The service refusal that matches an engine error (its reason, or a bad button)."""
    if error.reason is not None:
        return Refused(Reason(error.reason))
    return Refused(Reason.BAD_BUTTON, {"detail": str(error)})


class Service:
    """The base of the services: storage access, the game cache and the topic locks."""

    def __init__(self, units: UnitOfWorkFactory, store: GameStore) -> None:
        self._units = units
        self._store = store

    @asynccontextmanager
    async def _change(self, place: Place, receipt: Receipt | None) -> AsyncIterator[UnitOfWork]:
        """One change in one chat topic: its lock, one transaction, and the update's mark.

        A redelivered update raises ``Refused(DUPLICATE_UPDATE)`` and changes nothing. A refusal
        keeps the cached games it did not touch (:meth:`GameStore.refused`); any other failure
        drops the topic's cached games.
        """
        async with self._store.lock(place):
            try:
                async with self._units() as uow:
                    update_id = receipt.update_id if receipt else None
                    if update_id is not None and not await uow.updates.mark_update_processed(
                        update_id
                    ):
                        raise Refused(Reason.DUPLICATE_UPDATE)
                    yield uow
            except Refused:
                self._store.refused(place)
                raise
            except BaseException:
                self._store.forget_place(place)
                raise
            self._store.committed(place)
        self._store.planner.notify()

    async def _apply(
        self,
        uow: UnitOfWork,
        row: GameRow,
        loaded: LoadedGame,
        step: Callable[[], T],
        *,
        actor: Actor | None,
        receipt: Receipt | None,
        reaction_ms: int | None = None,
    ) -> tuple[T, tuple[Operation, ...]]:
        """Run one engine step on ``loaded`` and store its operations; return its result and them.

        The rules refusing a person's step (``actor`` given) is a refusal, storing nothing; refusing
        the bot's own step (a timer's, a race's decision) is a defect, raised as it is.
        """
        before = len(loaded.game.history)
        try:
            result = step()
        except SnapError as error:
            if actor is None:
                raise
            raise refusal_for(error) from None
        operations = tuple(loaded.game.history[before:])
        await self._store.save(
            uow,
            row,
            loaded,
            operations,
            actor=actor,
            receipt=receipt,
            reaction_ms=reaction_ms,
        )
        if any(isinstance(op, PlayerLeft) for op in operations):
            hand_on_running(row, loaded.game, loaded.user_ids)
        return result, operations

    @staticmethod
    async def _remember_people(uow: UnitOfWork, place: Place, actor: Actor) -> None:
        await uow.chats.upsert(place.chat_id, place.chat_type, place.title, place.is_forum)
        await uow.users.upsert(
            actor.user_id, actor.first_name, actor.last_name, actor.username, actor.language_code
        )

    @staticmethod
    async def _active_game(uow: UnitOfWork, place: Place, game_id: int | None = None) -> GameRow:
        """The topic's lobby or running game; ``game_id`` (from a button) must match it."""
        row = await uow.games.find_active(place.chat_id, place.thread_id)
        if row is None and game_id is None:
            raise Refused(Reason.NO_GAME)
        if row is None or (game_id is not None and row.id != game_id):
            assert game_id is not None
            raise await Service._button_refusal(uow, place, game_id)
        return row

    @staticmethod
    async def _button_refusal(uow: UnitOfWork, place: Place, game_id: int) -> Refused:
        """Why a button of another game is refused: it ended in this topic, or it is not ours."""
        pressed = await uow.games.get(game_id, lock=False)
        if (
            pressed is not None
            and (pressed.chat_id, pressed.thread_id) == (place.chat_id, place.thread_id)
            and pressed.status not in (GameStatus.LOBBY.value, GameStatus.RUNNING.value)
        ):
            return Refused(Reason.GAME_OVER)
        return Refused(Reason.OTHER_GAME)

    async def _running_game(
        self, uow: UnitOfWork, place: Place, game_id: int | None = None
    ) -> GameRow:
        """The topic's running game row: kept from its last change (one process), or read."""
        row = self._store.kept_row(uow, place)
        if row is not None and (game_id is None or row.id == game_id):
            return row
        row = await self._active_game(uow, place, game_id)
        if row.status != GameStatus.RUNNING.value:
            raise Refused(Reason.NO_GAME, {"lobby": True})
        self._store.keep_row(place, row)
        return row
