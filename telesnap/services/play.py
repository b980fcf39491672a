"""Playing a running game: flips, calls, races, and the boards shown to players."""

from __future__ import annotations

from datetime import datetime

from ..game import CallKind, CallVerdict, SnapError
from ..game.race import NANOSECONDS_PER_MS
from ..storage.uow import UnitOfWork
from .base import Service, refusal_for
from .races import enter_race
from .store import LoadedGame
from .types import Actor, Place, Reason, Receipt, Refused
from .views import CallOutcome, PlayOutcome


class PlayService(Service):
    """Flip, and call "Snap!" or "Snap Pot!" (races are decided by :mod:`.races`)."""

    async def flip(
        self,
        place: Place,
        actor: Actor,
        receipt: Receipt,
        seen_version: int | None = None,
        game_id: int | None = None,
    ) -> PlayOutcome:
        """Flip for ``actor`` if it is their turn.

        ``seen_version`` is the board version of the pressed button (None for a typed
        command); a button on an older board is refused so one press cannot flip twice.
        """
        async with self._change(place, receipt) as uow:
            row = await self._running_game(uow, place, game_id)
            loaded = await self._store.load(uow, row)
            seat = loaded.seat_of(actor.user_id)
            game = loaded.game
            if seen_version is not None and seen_version != game.board_version:
                raise Refused(Reason.OLD_BOARD)
            before = len(game.history)
            try:
                game.flip(seat)
            except SnapError as error:
                raise refusal_for(error) from None
            end_if_flip_limit(loaded)
            await self._back_from_away(uow, loaded, seat)
            operations = tuple(game.history[before:])
            await self._store.save(uow, row, loaded, operations, actor=actor, receipt=receipt)
            return PlayOutcome(loaded.table(), operations)

    async def call(
        self,
        place: Place,
        actor: Actor,
        kind: CallKind,
        receipt: Receipt,
        seen_version: int | None = None,
        game_id: int | None = None,
    ) -> CallOutcome:
        """Record a call and return its verdict on arrival.

        A correct call enters the game's stored race (opened by the first one), in the
        same transaction; ``race_id`` and ``race_deadline_ns`` say which race and when it
        must be decided, on the monotonic clock of the receipt stamps.
        """
        async with self._change(place, receipt) as uow:
            row = await self._running_game(uow, place, game_id)
            loaded = await self._store.load(uow, row)
            seat = loaded.seat_of(actor.user_id)
            game = loaded.game
            version = game.board_version if seen_version is None else seen_version
            reaction_ms = self._reaction_ms(
                loaded, version, receipt, row.board_version, row.board_shown_at
            )
            before = len(game.history)
            try:
                op = game.call(
                    seat,
                    kind,
                    stamp_ns=receipt.monotonic_ns,
                    sequence=receipt.sequence,
                    seen_version=version,
                )
            except SnapError as error:
                raise refusal_for(error) from None
            operations = tuple(game.history[before:])
            ticket = None
            if op.verdict is CallVerdict.PENDING:
                window_ms = loaded.settings.tie_window_ms
                call_seq = loaded.stored_operations + 1
                ticket = await enter_race(uow, row, window_ms, receipt, call_seq)
            await self._store.save(
                uow, row, loaded, operations, actor=actor, receipt=receipt, reaction_ms=reaction_ms
            )
            return CallOutcome(
                verdict=op.verdict,
                behind_ms=op.behind_ms,
                reaction_ms=reaction_ms,
                race_deadline_ns=ticket.deadline_ns if ticket else None,
                play=PlayOutcome(loaded.table(), operations),
                race_id=ticket.race_id if ticket else None,
            )

    @staticmethod
    async def _back_from_away(uow: UnitOfWork, loaded: LoadedGame, seat: int) -> None:
        """A player who flips by themselves is no longer counted as away."""
        if not loaded.afk_streaks.pop(seat, 0):
            return
        player = await uow.games.get_player(loaded.game_id, loaded.user_ids[seat])
        if player is not None:
            player.afk_streak = 0

    @staticmethod
    def _reaction_ms(
        loaded: LoadedGame,
        version: int,
        receipt: Receipt,
        stored_version: int,
        stored_shown_at: datetime | None,
    ) -> int | None:
        shown_ns = loaded.shown_at_ns.get(version)
        if shown_ns is not None:
            return max(0, (receipt.monotonic_ns - shown_ns) // NANOSECONDS_PER_MS)
        if stored_version == version and stored_shown_at is not None:
            return max(0, int((receipt.wall - stored_shown_at).total_seconds() * 1000))
        return None

    def record_board_shown(
        self, game_id: int, version: int, message_id: int, shown: Receipt
    ) -> None:
        """Remember when the message showing board ``version`` reached Telegram.

        Reaction times are measured from it. It is kept in memory, and written to
        the game's row with the next change to the game (no extra transaction).
        """
        loaded = self._store.cached(game_id)
        if loaded is not None:
            loaded.shown_at_ns[version] = shown.monotonic_ns
            loaded.shown_messages[version] = (message_id, shown.wall)

    async def running_games(self) -> list[tuple[Place, PlayOutcome]]:
        """Every running game and its table (to post them again after a restart)."""
        async with UnitOfWork(self._sessions) as uow:
            games = []
            for row in await uow.games.list_running():
                loaded = await self._store.load(uow, row)
                games.append((loaded.place, PlayOutcome(loaded.table(), ())))
            return games

    async def table(self, place: Place) -> PlayOutcome:
        """The topic's running game as it stands (to show it again)."""
        async with self._change(place, None) as uow:
            row = await self._running_game(uow, place)
            loaded = await self._store.load(uow, row)
            return PlayOutcome(loaded.table(), ())


def end_if_flip_limit(loaded: LoadedGame) -> None:
    """End the game when it has reached the flip limit it plays by."""
    limit = loaded.settings.flip_limit
    game = loaded.game
    if limit is not None and game.flips >= limit and game.can_end_by_limit():
        game.end_by_limit()
