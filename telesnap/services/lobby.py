"""Lobbies and membership: open a game, join, leave, start, end, kick."""

from __future__ import annotations

import logging
import random
import secrets

from ..game import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    EndReason,
    Game,
    LeaveReason,
    SnapError,
    shuffled_deck,
)
from ..storage.errors import ActiveGameExistsError
from ..storage.models import Game as GameRow
from ..storage.models import GameStatus
from ..storage.uow import UnitOfWork
from .base import Service, refusal_for
from .ports import UnitOfWorkFactory
from .settings import GameSettings
from .store import GameStore, finish_row, loaded_game, name_of
from .types import Actor, Place, Reason, Receipt, Refused
from .views import LobbyView, PlayOutcome, StartOutcome

logger = logging.getLogger(__name__)


class LobbyService(Service):
    """Open, fill, start and close games.

    ``shuffle_seed`` pins every game's shuffle (for tests and demonstrations);
    by default each game draws a fresh seed, stored with the game.
    """

    def __init__(
        self,
        units: UnitOfWorkFactory,
        store: GameStore,
        *,
        shuffle_seed: int | None = None,
    ) -> None:
        super().__init__(units, store)
        self.shuffle_seed = shuffle_seed

    async def open(self, place: Place, actor: Actor, receipt: Receipt) -> LobbyView:
        """Open a lobby in the topic with ``actor`` as its first player."""
        if place.is_private:
            raise Refused(Reason.PRIVATE_CHAT)
        async with self._change(place, receipt) as uow:
            await self._remember_people(uow, place, actor)
            try:
                row = await uow.games.add(place.chat_id, place.thread_id, actor.user_id)
            except ActiveGameExistsError:
                raise Refused(Reason.GAME_EXISTS) from None
            await uow.games.add_player(row.id, actor.user_id)
            settings = GameSettings.from_values(
                await uow.settings.get_effective_values(place.chat_id, place.thread_id)
            )
            await self._store.planner.lobby_opened(uow, row, settings)
            return await lobby_view(uow, row)

    async def join(
        self, place: Place, actor: Actor, receipt: Receipt, game_id: int | None = None
    ) -> LobbyView:
        """Seat ``actor`` in the topic's lobby."""
        async with self._change(place, receipt) as uow:
            row = await self._lobby(uow, place, game_id)
            await self._remember_people(uow, place, actor)
            if await uow.games.get_player(row.id, actor.user_id) is not None:
                raise Refused(Reason.ALREADY_JOINED)
            if await uow.games.count_players(row.id) >= MAX_PLAYERS:
                raise Refused(Reason.LOBBY_FULL, {"max": MAX_PLAYERS})
            await uow.games.add_player(row.id, actor.user_id)
            return await lobby_view(uow, row)

    async def lobby(self, place: Place) -> LobbyView:
        """The topic's lobby as it stands."""
        async with self._change(place, None) as uow:
            return await lobby_view(uow, await self._lobby(uow, place))

    async def leave(
        self, place: Place, actor: Actor, receipt: Receipt, game_id: int | None = None
    ) -> LobbyView | PlayOutcome:
        """Take ``actor`` out of the lobby, or out of the running game (cards dealt out)."""
        async with self._change(place, receipt) as uow:
            row = await self._active_game(uow, place, game_id)
            if row.status == GameStatus.LOBBY.value:
                if not await uow.games.remove_player(row.id, actor.user_id):
                    raise Refused(Reason.NOT_JOINED)
                if await uow.games.count_players(row.id) == 0:
                    row.status = GameStatus.CANCELLED.value
                    row.ended_at = self._store.planner.now()
                return await lobby_view(uow, row)
            return await self._remove_from_running(
                uow, row, actor, actor.user_id, LeaveReason.LEFT, receipt
            )

    async def kick(
        self, place: Place, actor: Actor, target_user_id: int, *, is_admin: bool, receipt: Receipt
    ) -> LobbyView | PlayOutcome:
        """Remove another player (the game's creator or a chat admin only)."""
        async with self._change(place, receipt) as uow:
            row = await self._active_game(uow, place)
            self._check_may_manage(row, actor, is_admin)
            if row.status == GameStatus.LOBBY.value:
                if not await uow.games.remove_player(row.id, target_user_id):
                    raise Refused(Reason.TARGET_NOT_PLAYING)
                return await lobby_view(uow, row)
            return await self._remove_from_running(
                uow, row, actor, target_user_id, LeaveReason.REMOVED, receipt
            )

    async def start(
        self,
        place: Place,
        actor: Actor,
        *,
        is_admin: bool,
        receipt: Receipt,
        game_id: int | None = None,
    ) -> StartOutcome:
        """Deal the cards: the creator (or a chat admin) starts a lobby of 2 to 12 players."""
        async with self._change(place, receipt) as uow:
            row = await self._lobby(uow, place, game_id)
            self._check_may_manage(row, actor, is_admin)
            players = await uow.games.list_players(row.id)
            if len(players) < MIN_PLAYERS:
                raise Refused(Reason.TOO_FEW_PLAYERS, {"min": MIN_PLAYERS})
            settings = GameSettings.from_values(
                await uow.settings.get_effective_values(place.chat_id, place.thread_id)
            )
            seed = self.shuffle_seed if self.shuffle_seed is not None else secrets.randbits(62)
            rng = random.Random(seed)
            dealer = rng.randrange(len(players))
            game = Game()
            game.deal(
                len(players),
                dealer=dealer,
                deck=shuffled_deck(rng),
                match_mode=settings.match_mode,
                wrong_call_penalty=settings.wrong_call_penalty,
            )
            row.status = GameStatus.RUNNING.value
            row.seed = seed
            row.settings = settings.to_values()
            row.started_at = self._store.planner.now()
            loaded = await loaded_game(uow, row, game, players, settings, 0)
            await self._store.save(
                uow, row, loaded, tuple(game.history), actor=actor, receipt=receipt
            )
            self._store.adopt(loaded)
            return StartOutcome(
                await lobby_view(uow, row), PlayOutcome(loaded.table(), tuple(game.history))
            )

    async def end(
        self, place: Place, actor: Actor, *, is_admin: bool, receipt: Receipt
    ) -> PlayOutcome | None:
        """Stop the topic's game (creator or admin): a lobby is cancelled, a game abandoned.

        Returns the final table of an abandoned game, None for a cancelled lobby.
        """
        async with self._change(place, receipt) as uow:
            row = await self._active_game(uow, place)
            self._check_may_manage(row, actor, is_admin)
            row.ended_at = self._store.planner.now()
            if row.status == GameStatus.LOBBY.value:
                row.status = GameStatus.CANCELLED.value
                return None
            loaded = await self._store.load(uow, row)
            before = len(loaded.game.history)
            loaded.game.abandon()
            operations = tuple(loaded.game.history[before:])
            await self._store.save(uow, row, loaded, operations, actor=actor, receipt=receipt)
            self._store.forget(row.id)
            return PlayOutcome(loaded.table(), operations)

    async def _remove_from_running(
        self,
        uow: UnitOfWork,
        row: GameRow,
        actor: Actor,
        user_id: int,
        reason: LeaveReason,
        receipt: Receipt,
    ) -> PlayOutcome:
        loaded = await self._store.load(uow, row)
        if user_id != actor.user_id and user_id not in loaded.user_ids:
            raise Refused(Reason.TARGET_NOT_PLAYING)
        seat = loaded.seat_of(user_id)
        before = len(loaded.game.history)
        try:
            loaded.game.remove(seat, reason)
        except SnapError as error:
            raise refusal_for(error) from None
        player = await uow.games.get_player(row.id, user_id)
        if player is not None:
            player.left_at = self._store.planner.now()
            player.leave_reason = reason.value
        operations = tuple(loaded.game.history[before:])
        await self._store.save(uow, row, loaded, operations, actor=actor, receipt=receipt)
        return PlayOutcome(loaded.table(), operations)

    @staticmethod
    def _check_may_manage(row: GameRow, actor: Actor, is_admin: bool) -> None:
        if row.creator_id != actor.user_id and not is_admin:
            raise Refused(Reason.NOT_CREATOR)

    async def _lobby(self, uow: UnitOfWork, place: Place, game_id: int | None = None) -> GameRow:
        row = await self._active_game(uow, place, game_id)
        if row.status != GameStatus.LOBBY.value:
            raise Refused(Reason.NOT_IN_LOBBY)
        return row

    async def active_game_id(self, place: Place) -> int | None:
        """The id of the topic's game in lobby or running, if any (a read, no change)."""
        async with self._units() as uow:
            row = await uow.games.find_active(place.chat_id, place.thread_id, lock=False)
            return row.id if row is not None else None

    async def end_in_removed_chat(self, chat_id: int) -> list[int]:
        """The bot was removed from the chat: end its games in every topic; return their ids.

        A lobby is cancelled, a running game abandoned (recorded in its history,
        counting for nothing), and their timers are deleted. Each game ends in a
        transaction of its own, under its topic's lock.
        """
        async with self._units() as uow:
            active = [
                (row.id, row.thread_id) for row in await uow.games.list_active_in_chat(chat_id)
            ]
        ended = []
        for game_id, thread_id in active:
            async with self._change(Place(chat_id, thread_id), None) as uow:
                row = await uow.games.get(game_id)
                if row is None or row.status not in (
                    GameStatus.LOBBY.value,
                    GameStatus.RUNNING.value,
                ):
                    continue
                row.ended_at = self._store.planner.now()
                if row.status == GameStatus.LOBBY.value:
                    row.status = GameStatus.CANCELLED.value
                else:
                    await self._abandon_unattended(uow, row)
                await uow.timers.cancel_for_game(row.id)
                ended.append(game_id)
        return ended

    async def _abandon_unattended(self, uow: UnitOfWork, row: GameRow) -> None:
        """Abandon a running game nobody can play any more (its history says so)."""
        try:
            loaded = await self._store.load(uow, row)
        except SnapError:
            # Its history cannot be replayed: end the row all the same, so nothing waits on it.
            logger.exception("game %s cannot be rebuilt; marked abandoned without a record", row.id)
            finish_row(row, EndReason.ABANDONED, [])
            self._store.forget(row.id)
            return
        before = len(loaded.game.history)
        loaded.game.abandon()
        operations = tuple(loaded.game.history[before:])
        await self._store.save(uow, row, loaded, operations, actor=None, receipt=None, human=False)
        self._store.forget(row.id)

    async def set_lobby_message(self, place: Place, game_id: int, message_id: int) -> None:
        """Remember the message that shows the lobby, so later changes edit it."""
        async with self._change(place, None) as uow:
            row = await uow.games.get(game_id)
            if row is not None:
                row.lobby_message_id = message_id


async def lobby_view(uow: UnitOfWork, row: GameRow) -> LobbyView:
    """The lobby of a stored game, with its players' names in join order."""
    seated = [
        (player.user_id, await name_of(uow, player.user_id))
        for player in await uow.games.list_players(row.id)
    ]
    return LobbyView(row.id, row.creator_id, tuple(seated), row.status, row.lobby_message_id)
