"""Lobbies and membership: open a game, join, leave, start, end, kick."""

from __future__ import annotations

import logging
import math
import random
import secrets
from datetime import datetime, timedelta

from ...game import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    EndReason,
    Game,
    LeaveReason,
    SnapError,
    shuffled_deck,
)
from ...storage.errors import ActiveGameExistsError
from ...storage.models import Game as GameRow
from ...storage.models import GameStatus
from ...storage.uow import UnitOfWork
from ..chat_settings import ChatLanguages, adopt_language, topic_settings
from ..notify import alert_subscribers
from ..outbox.rows import Notice, NoticeKind, note_board, record_lobby, record_notice
from ..ports import UnitOfWorkFactory
from ..timers.planner import LobbyTooLongError, TimerPlanner
from ..types import Actor, Place, Reason, Receipt, Refused, display_name
from ..views import LobbyView, OpenOutcome, PlayOutcome, StartOutcome
from .base import Service
from .managers import AdminCheck, ManagerCheck, hand_on_lobby
from .store import GameStore, finish_row, loaded_game, names_of

logger = logging.getLogger(__name__)


class LobbyService(Service):
    """Open, fill, start and close games (``shuffle_seed`` pins every shuffle, for tests)."""

    def __init__(
        self,
        units: UnitOfWorkFactory,
        store: GameStore,
        *,
        shuffle_seed: int | None = None,
        languages: ChatLanguages | None = None,
    ) -> None:
        super().__init__(units, store)
        self.shuffle_seed = shuffle_seed
        self._languages = languages if languages is not None else ChatLanguages(units)

    async def open(
        self,
        place: Place,
        actor: Actor,
        receipt: Receipt,
        *,
        language: str | None = None,
        link: str | None = None,
    ) -> OpenOutcome:
        """Open a lobby in the topic with ``actor`` as its first player.

        A chat without a language adopts ``language`` (the opener's) and the lobby is shown in the
        chat's; ``/notify`` subscribers (not the opener) are told privately, with ``link``.
        """
        if place.is_private:
            raise Refused(Reason.PRIVATE_CHAT)
        async with self._change(place, receipt) as uow:
            await self._remember_people(uow, place, actor)
            try:
                row = await uow.games.add(place.chat_id, place.thread_id, actor.user_id)
            except ActiveGameExistsError:
                active = await uow.games.find_active(place.chat_id, place.thread_id, lock=False)
                running = active is not None and active.status == GameStatus.RUNNING.value
                joined = active is not None and any(
                    player.user_id == actor.user_id and player.left_at is None
                    for player in await uow.games.list_players(active.id)
                )
                opened = active is not None and active.creator_id == actor.user_id
                details = {"running": running, "joined": joined, "opened": opened}
                raise Refused(Reason.GAME_EXISTS, details) from None
            await uow.games.add_player(row.id, actor.user_id)
            settings = await topic_settings(uow, place)
            await self._store.planner.lobby_opened(uow, row, settings)
            chat_language = await adopt_language(uow, place, language)
            self._languages.chosen(uow, place.chat_id, chat_language)
            lobby = await shown_lobby(uow, place, row, self._store.planner)
            alerted = await alert_subscribers(uow, place, actor, link)
            return OpenOutcome(lobby, chat_language, alerted)

    async def join(
        self, place: Place, actor: Actor, receipt: Receipt, game_id: int | None = None
    ) -> LobbyView:
        """Seat ``actor`` in the topic's lobby."""
        async with self._change(place, receipt) as uow:
            row = await self._lobby(uow, place, game_id, asker=actor.user_id)
            await self._remember_people(uow, place, actor)
            if await uow.games.get_player(row.id, actor.user_id) is not None:
                raise Refused(Reason.ALREADY_JOINED)
            if await uow.games.count_players(row.id) >= MAX_PLAYERS:
                raise Refused(Reason.LOBBY_FULL, {"max": MAX_PLAYERS})
            await uow.games.add_player(row.id, actor.user_id)
            return await shown_lobby(uow, place, row, self._store.planner)

    async def lobby(self, place: Place) -> LobbyView:
        """The topic's lobby as it stands."""
        async with self._change(place, None) as uow:
            return await lobby_view(uow, await self._lobby(uow, place), self._store.planner)

    async def extend(
        self,
        place: Place,
        actor: Actor,
        more: timedelta,
        *,
        is_admin: AdminCheck,
        receipt: Receipt,
    ) -> LobbyView:
        """Push the lobby's expiry ``more`` later (the creator or a chat admin only).

        Refused past :data:`~.timers.planner.LONGEST_LOBBY` from now, with when it closes.
        """
        manager = ManagerCheck(actor.user_id, is_admin)
        await self._ask_before_the_lock(manager, place, lobby_only=True)
        async with self._change(place, receipt) as uow:
            row = await self._lobby(uow, place, asker=actor.user_id)
            await self._check_may_manage(uow, row, manager)
            try:
                await self._store.planner.extend_lobby(uow, row, more)
            except LobbyTooLongError as error:
                raise Refused(
                    Reason.LOBBY_TOO_LONG, {"closes_at": error.closes_at.isoformat()}
                ) from None
            return await shown_lobby(uow, place, row, self._store.planner)

    async def leave(
        self, place: Place, actor: Actor, receipt: Receipt, game_id: int | None = None
    ) -> LobbyView | PlayOutcome:
        """Take ``actor`` out of the lobby, or out of the running game (cards dealt out)."""
        async with self._change(place, receipt) as uow:
            row = await self._active_game(uow, place, game_id)
            if row.status == GameStatus.LOBBY.value:
                if not await uow.games.remove_player(row.id, actor.user_id):
                    raise Refused(Reason.NOT_JOINED)
                return await self._lobby_left(uow, place, row)
            return await self._remove_from_running(
                uow, row, actor, actor.user_id, LeaveReason.LEFT, receipt
            )

    async def kick(
        self,
        place: Place,
        actor: Actor,
        target_user_id: int,
        *,
        is_admin: AdminCheck,
        receipt: Receipt,
    ) -> LobbyView | PlayOutcome:
        """Remove another player (the game's creator or a chat admin only)."""
        manager = ManagerCheck(actor.user_id, is_admin)
        await self._ask_before_the_lock(manager, place)
        async with self._change(place, receipt) as uow:
            row = await self._active_game(uow, place)
            await self._check_may_manage(uow, row, manager)
            if row.status == GameStatus.LOBBY.value:
                if not await uow.games.remove_player(row.id, target_user_id):
                    raise Refused(Reason.TARGET_NOT_PLAYING)
                return await self._lobby_left(uow, place, row)
            return await self._remove_from_running(
                uow, row, actor, target_user_id, LeaveReason.REMOVED, receipt
            )

    async def _lobby_left(self, uow: UnitOfWork, place: Place, row: GameRow) -> LobbyView:
        """A player is out of the lobby: who joined first runs it; the last one calls it off."""
        if not await hand_on_lobby(uow, row):
            row.status = GameStatus.CANCELLED.value
            row.ended_at = self._store.planner.now()
        return await shown_lobby(uow, place, row, self._store.planner)

    async def start(
        self,
        place: Place,
        actor: Actor,
        *,
        is_admin: AdminCheck,
        receipt: Receipt,
        game_id: int | None = None,
    ) -> StartOutcome:
        """Deal the cards: the creator (or a chat admin) starts a lobby of 2 to 12 players."""
        manager = ManagerCheck(actor.user_id, is_admin)
        await self._ask_before_the_lock(manager, place, game_id, lobby_only=True)
        async with self._change(place, receipt) as uow:
            row = await self._lobby(uow, place, game_id, asker=actor.user_id)
            await self._check_may_manage(uow, row, manager)
            players = await uow.games.list_players(row.id)
            if len(players) < MIN_PLAYERS:
                raise Refused(Reason.TOO_FEW_PLAYERS, {"min": MIN_PLAYERS})
            settings = await topic_settings(uow, place)
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
            # The closed lobby goes before the table.
            lobby = await shown_lobby(uow, place, row, self._store.planner)
            loaded = await loaded_game(uow, row, game, players, settings, 0)
            await self._store.save(
                uow, row, loaded, tuple(game.history), actor=actor, receipt=receipt
            )
            self._store.adopt(loaded)
            return StartOutcome(lobby, PlayOutcome(loaded.table(), tuple(game.history)))

    async def end(
        self, place: Place, actor: Actor, *, is_admin: AdminCheck, receipt: Receipt
    ) -> PlayOutcome | None:
        """Stop the topic's game (creator or admin): a lobby is cancelled, a game abandoned.

        Returns the final table of an abandoned game, None for a cancelled lobby.
        """
        manager = ManagerCheck(actor.user_id, is_admin)
        await self._ask_before_the_lock(manager, place)
        async with self._change(place, receipt) as uow:
            row = await self._active_game(uow, place)
            await self._check_may_manage(uow, row, manager)
            row.ended_at = self._store.planner.now()
            if row.status == GameStatus.LOBBY.value:
                row.status = GameStatus.CANCELLED.value
                # Its message closes: no more joins.
                await shown_lobby(uow, place, row, self._store.planner)
                await record_notice(uow, place, Notice(NoticeKind.CALLED_OFF), game_id=row.id)
                return None
            loaded = await self._store.load(uow, row)
            _, operations = await self._apply(
                uow, row, loaded, loaded.game.abandon, actor=actor, receipt=receipt
            )
            stopped_by = {
                "user_id": actor.user_id,
                "name": display_name(actor.first_name, actor.last_name, actor.username),
            }
            await note_board(uow, place, row.id, Notice(NoticeKind.STOPPED, stopped_by))
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
        player = await uow.games.get_player(row.id, user_id)
        if player is not None:  # before the save, whose events read it (a refusal rolls it back)
            player.left_at = self._store.planner.now()
            player.leave_reason = reason.value
        try:
            _, operations = await self._apply(
                uow,
                row,
                loaded,
                lambda: loaded.game.remove(seat, reason),
                actor=actor,
                receipt=receipt,
            )
        except Refused as refused:
            gone = refused.reason in (Reason.NOT_PLAYING, Reason.PLAYER_OUT)
            if gone and user_id != actor.user_id:  # about the player removed, not the manager
                raise Refused(Reason.TARGET_NOT_PLAYING) from None
            raise
        return PlayOutcome(loaded.table(), operations)

    async def _ask_before_the_lock(
        self,
        manager: ManagerCheck,
        place: Place,
        game_id: int | None = None,
        *,
        lobby_only: bool = False,
    ) -> None:
        """Ask the admin check now, if someone else created the game the action is for.

        Outside the topic's lock and any transaction, so none waits on it; a game that changed
        hands meanwhile is asked about under the lock. Nothing is asked when there is no game.
        """
        async with self._units(read_only=True) as uow:
            row = await uow.games.find_active(place.chat_id, place.thread_id, lock=False)
            if row is None or (game_id is not None and row.id != game_id):
                return
            if lobby_only and row.status != GameStatus.LOBBY.value:
                return
            creator_id = row.creator_id
        await manager.may_manage(creator_id)

    @staticmethod
    async def _check_may_manage(uow: UnitOfWork, row: GameRow, manager: ManagerCheck) -> None:
        """Refuse unless the actor runs the game or is an admin, naming who runs it.

        The role passes on when its holder leaves, so "the creator" may not say who that is.
        """
        if not await manager.may_manage(row.creator_id):
            runner = await uow.users.get(row.creator_id)
            if runner is None:
                raise Refused(Reason.NOT_CREATOR)
            name = display_name(runner.first_name, runner.last_name, runner.username)
            raise Refused(Reason.NOT_CREATOR, {"name": name})

    async def _lobby(
        self, uow: UnitOfWork, place: Place, game_id: int | None = None, *, asker: int = 0
    ) -> GameRow:
        """The topic's lobby; refused once its game started (``asker`` told they play in it)."""
        row = await self._active_game(uow, place, game_id)
        if row.status != GameStatus.LOBBY.value:
            seat = await uow.games.get_player(row.id, asker) if asker else None
            playing = seat is not None and seat.left_at is None
            raise Refused(Reason.NOT_IN_LOBBY, {"playing": playing})
        return row

    async def active_game_id(self, place: Place) -> int | None:
        """The id of the topic's game in lobby or running, if any (a read, no change)."""
        async with self._units() as uow:
            row = await uow.games.find_active(place.chat_id, place.thread_id, lock=False)
            return row.id if row is not None else None

    async def end_in_removed_chat(self, chat_id: int) -> list[int]:
        """The bot was removed from the chat: end its games in every topic; return their ids.

        Each game ends in a transaction of its own, under its topic's lock.
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
        await self._apply(uow, row, loaded, loaded.game.abandon, actor=None, receipt=None)
        self._store.forget(row.id)


async def lobby_view(uow: UnitOfWork, row: GameRow, planner: TimerPlanner) -> LobbyView:
    """The lobby of a stored game: its players' names in join order, when it closes."""
    user_ids = [player.user_id for player in await uow.games.list_players(row.id)]
    seated = list(zip(user_ids, await names_of(uow, user_ids), strict=True))
    closes_at = None
    if row.status == GameStatus.LOBBY.value:
        closes_at = await planner.lobby_closes_at(uow, row)
    return LobbyView(
        row.id,
        row.creator_id,
        tuple(seated),
        row.status,
        row.lobby_message_id,
        closes_at.isoformat() if closes_at is not None else None,
        minutes_until(closes_at, planner.now()) if closes_at is not None else None,
    )


def minutes_until(moment: datetime, now: datetime) -> int:
    """Whole minutes from ``now`` to ``moment``, rounded up (0 once it has passed).

    >>> from datetime import UTC
    >>> noon = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    >>> minutes_until(noon + timedelta(seconds=61), noon), minutes_until(noon, noon)
    (2, 0)
    """
    return max(0, math.ceil((moment - now).total_seconds() / 60))


async def shown_lobby(
    uow: UnitOfWork, place: Place, row: GameRow, planner: TimerPlanner
) -> LobbyView:
    """The lobby of ``row`` as the change in ``uow`` left it, written to the outbox to be shown."""
    view = await lobby_view(uow, row, planner)
    await record_lobby(uow, place, view)
    return view
