"""Playing a running game: flips, calls, races, and the boards shown to players."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import datetime, timedelta

from ...game import CallKind, CallVerdict, PenaltyPaid, SnapError
from ...storage.models import GameStatus
from ...storage.uow import UnitOfWork
from ..outbox.board_views import ShownBoards
from ..outbox.record import write_board
from ..outbox.rows import Notice, NoticeKind
from ..ports import UnitOfWorkFactory
from ..types import Actor, Place, Reason, Receipt, Refused
from ..views import CallOutcome, PlayOutcome
from .base import Service
from .races import enter_race
from .store import GameStore, LoadedGame, place_of

logger = logging.getLogger(__name__)


class PlayService(Service):
    """Flip, and call "Snap!" or "Snap Pot!" (races are decided by :mod:`.races`)."""

    def __init__(
        self,
        units: UnitOfWorkFactory,
        store: GameStore,
        wall_time_of: Callable[[datetime], datetime] | None = None,
    ) -> None:
        """Play the games of ``store`` through ``units``.

        ``wall_time_of``: the wall time (receipts are stamped by) when the clock boards are shown
        by read a moment, where they differ (the sandbox's Skip ahead moves the boards' alone):
        calls are timed on the wall, whenever the clock jumped.
        """
        super().__init__(units, store)
        self._shown = ShownBoards()
        self._wall_time_of = wall_time_of

    async def flip(
        self,
        place: Place,
        actor: Actor,
        receipt: Receipt,
        seen_version: int | None = None,
        game_id: int | None = None,
    ) -> PlayOutcome:
        """Flip for ``actor`` if it is their turn.

        ``seen_version``: the pressed board (None: typed). A button of the newest board in the chat
        acts on the game as it is now, even while newer boards wait for Telegram's flood limit, if
        its presser has not flipped since (one press cannot flip twice); one of a board replaced
        in the chat is refused as old.
        """
        async with self._change(place, receipt) as uow:
            row = await self._running_game(uow, place, game_id)
            loaded = await self._store.load(uow, row)
            seat = loaded.seat_of(actor.user_id)
            game = loaded.game
            if seen_version is not None and seen_version != game.board_version:
                newest = await self._shown.newest_version(uow, loaded.game_id)
                if newest is not None and seen_version < newest:
                    live = loaded.settings.board_style == "live"
                    raise Refused(Reason.OLD_BOARD, {"live": live})

            def flip() -> None:
                game.flip(seat, seen_version)
                end_if_flip_limit(loaded)

            await self._back_from_away(uow, loaded, seat)
            _, operations = await self._apply(uow, row, loaded, flip, actor=actor, receipt=receipt)
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

        A correct call enters the game's stored race (opening it if first), in the same transaction.
        """
        async with self._change(place, receipt) as uow:
            row = await self._running_game(uow, place, game_id)
            loaded = await self._store.load(uow, row)
            seat = loaded.seat_of(actor.user_id)
            game = loaded.game
            version = game.board_version if seen_version is None else seen_version
            shown_at = await self._shown.shown_at(uow, loaded.game_id, version)
            if shown_at is not None and self._wall_time_of is not None:
                shown_at = self._wall_time_of(shown_at)
            reaction_ms = reaction_ms_since(shown_at, receipt)
            opens_race = not game.is_race_open
            call_seq = loaded.stored_operations + 1  # the call is the step's first operation
            op, operations = await self._apply(
                uow,
                row,
                loaded,
                lambda: game.call(
                    seat,
                    kind,
                    stamp_ns=receipt.stamp_ns,
                    sequence=receipt.sequence,
                    seen_version=version,
                ),
                actor=actor,
                receipt=receipt,
                reaction_ms=reaction_ms,
            )
            ticket = None
            if op.verdict is CallVerdict.PENDING:
                window_ms = loaded.settings.tie_window_ms
                ticket = await enter_race(uow, row, window_ms, receipt, call_seq, opens=opens_race)
            return CallOutcome(
                verdict=op.verdict,
                behind_ms=op.behind_ms,
                reaction_ms=reaction_ms,
                race_deadline_ns=ticket.deadline_ns if ticket else None,
                play=PlayOutcome(loaded.table(), operations),
                race_id=ticket.race_id if ticket else None,
                penalised=op.verdict is CallVerdict.WRONG
                and (
                    any(isinstance(paid, PenaltyPaid) for paid in operations)
                    or seat in game.deferred_wrong_calls  # paid once the open race is decided
                ),
            )

    @staticmethod
    async def _back_from_away(uow: UnitOfWork, loaded: LoadedGame, seat: int) -> None:
        """A player who flips by themselves is no longer counted as away."""
        if not loaded.afk_streaks.pop(seat, 0):
            return
        player = await uow.games.get_player(loaded.game_id, loaded.user_ids[seat])
        if player is not None:
            player.afk_streak = 0

    async def show_running_again(self, skip: Collection[int] = ()) -> int:
        """Write every running game's table to the outbox again, under "I am back"; how many.

        For a cold start: each goes after its game's unsent rows. A game that cannot be rebuilt
        from its history is logged and left out, so the others still resume.
        """
        async with self._units(read_only=True) as uow:
            running = [(row.id, place_of(row)) for row in await uow.games.list_running()]
        shown = 0
        for game_id, place in running:
            if game_id in skip:
                continue
            async with self._change(place, None) as uow:
                row = await uow.games.get(game_id)
                if row is None or row.status != GameStatus.RUNNING.value:
                    continue  # it ended meanwhile: its last board is in the outbox
                try:
                    loaded = await self._store.load(uow, row)
                except SnapError:
                    logger.exception(
                        "game %s (chat %s, topic %s) cannot be rebuilt from its history; left out",
                        row.id,
                        row.chat_id,
                        row.thread_id,
                    )
                    continue
                back = Notice(NoticeKind.RESUMED)
                await write_board(uow, row, PlayOutcome(loaded.table(), ()), [back])
                shown += 1
        return shown

    async def table(self, place: Place) -> PlayOutcome:
        """The topic's running game as it stands (to show it again)."""
        async with self._change(place, None) as uow:
            row = await self._running_game(uow, place)
            loaded = await self._store.load(uow, row)
            return PlayOutcome(loaded.table(), ())


def reaction_ms_since(shown_at: datetime | None, receipt: Receipt) -> int | None:
    """Milliseconds from the board's showing to the call's receipt (None: never shown).

    Wall clocks: the board may have been shown by another worker, or before a restart. A call
    that seems to come before its board (a clock moved meanwhile) has no reaction time, rather
    than 0 ms.

    >>> from datetime import UTC, datetime, timedelta
    >>> shown = datetime(2026, 1, 1, tzinfo=UTC)
    >>> reaction_ms_since(shown, Receipt(0, shown + timedelta(milliseconds=300)))
    300
    >>> reaction_ms_since(None, Receipt(0, shown)) is None
    True
    >>> reaction_ms_since(shown, Receipt(0, shown - timedelta(milliseconds=5))) is None
    True
    """
    if shown_at is None:
        return None
    elapsed = receipt.wall - shown_at
    return None if elapsed < timedelta(0) else elapsed // timedelta(milliseconds=1)


def end_if_flip_limit(loaded: LoadedGame) -> None:
    """End the game when it has reached the flip limit it plays by."""
    limit = loaded.settings.flip_limit
    game = loaded.game
    if limit is not None and game.flips >= limit and game.can_end_by_limit():
        game.end_by_limit()
