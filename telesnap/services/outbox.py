"""The durable outbox: what a change must show is stored in its transaction, sent afterwards.

A change to a game that players must see (a flip, a decided race, a wrong call,
a timer's move, the game's end) writes one outbox row in the change's own unit
of work (:func:`record_boards` subscribes to the store's
:class:`~.events.GameChanged`), so a committed change is never lost with the
process that made it. The row says *what* to show, as plain JSON: the table
after the change and the change's operations (:func:`.views.play_to_json`),
the chat topic, the game and its board version. The bot renders *how* at send
time, in the chat's language.

After Telegram accepts a board, its rows are marked sent together with the
record of the message that shows the board (:meth:`OutboxService.boards_sent`,
one transaction); a board Telegram refuses for good is marked failed and the
chat's later rows go on. Delivery is at least once: a crash between Telegram's
answer and that commit shows the board again after the restart.

Calls that wait for their race (and calls too late to count) show nothing of
their own: the race's decision shows the table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ..game import CallVerdict, Operation, SnapCalled, SnapError
from ..storage.models import GameStatus, OutboxState
from ..storage.repositories import ShownBoard
from ..storage.uow import UnitOfWork
from .events import GameChanged
from .ports import UnitOfWorkFactory
from .store import GameStore
from .views import PlayOutcome, play_from_json, play_to_json

logger = logging.getLogger(__name__)

BOARD = "board"
"""The kind of outbox row that shows a game's table and what just happened."""

_SILENT_VERDICTS = (CallVerdict.PENDING, CallVerdict.TOO_LATE)

T = TypeVar("T")


def shows_a_board(operations: Sequence[Operation]) -> bool:
    """Whether a change with ``operations`` is shown on a board (a waiting call is not)."""
    return any(
        not (isinstance(op, SnapCalled) and op.verdict in _SILENT_VERDICTS) for op in operations
    )


def record_boards(store: GameStore) -> None:
    """Make every change of ``store``'s games that players must see write its outbox row."""

    async def record_board(uow: UnitOfWork, event: GameChanged) -> None:
        if not shows_a_board(event.operations):
            return
        row = event.row
        loaded = store.cached(row.id)
        if loaded is None or loaded.stored_operations != row.history_length:
            # A game that just started or ended is not (or no longer) in the cache.
            loaded = await store.load(uow, row)
            if row.status != GameStatus.RUNNING.value:
                store.forget(row.id)
        board = PlayOutcome(loaded.table(), event.operations)
        await uow.outbox.add(
            row.chat_id,
            row.thread_id,
            BOARD,
            play_to_json(board),
            game_id=row.id,
            board_version=board.table.board_version,
        )

    store.events.subscribe(GameChanged, record_board)


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """One unsent board: where it goes, its row id (the order), and what it shows."""

    id: int
    chat_id: int
    thread_id: int
    game_id: int
    board: PlayOutcome


class OutboxService:
    """Reads the unsent rows, settles sent and failed ones, leases chats and keeps their pace."""

    def __init__(
        self, units: UnitOfWorkFactory, clock: Callable[[], datetime] | None = None
    ) -> None:
        """Use ``units`` for every transaction; ``clock`` (wall time, UTC) lets tests move time."""
        self._units = units
        self._clock = clock or (lambda: datetime.now(UTC))

    async def pending_boards(
        self, chat_id: int, game_id: int | None = None, after_id: int = 0
    ) -> list[OutboxEntry]:
        """The chat's unsent boards (of ``game_id`` only, if given) above ``after_id``, in order.

        A row that cannot be read back (written by a newer version, say) is marked
        failed and logged, so it never holds up the chat's later rows.
        """
        async with self._units() as uow:
            rows = await uow.outbox.pending(chat_id, after_id)
            entries: list[OutboxEntry] = []
            unreadable: list[int] = []
            for row in rows:
                if row.kind != BOARD or row.game_id is None:
                    unreadable.append(row.id)
                    continue
                if game_id is not None and row.game_id != game_id:
                    continue
                try:
                    board = play_from_json(row.payload)
                except (KeyError, TypeError, ValueError, SnapError):
                    logger.exception(
                        "chat %s: outbox row %s (game %s) cannot be read; set aside",
                        chat_id,
                        row.id,
                        row.game_id,
                    )
                    unreadable.append(row.id)
                    continue
                entries.append(OutboxEntry(row.id, row.chat_id, row.thread_id, row.game_id, board))
            await uow.outbox.settle(
                unreadable, OutboxState.FAILED, self._clock(), error="unreadable"
            )
            return entries

    async def chats_waiting(self, older_than: timedelta = timedelta(0)) -> list[int]:
        """Chats with a board unsent for longer than ``older_than`` that no live sender holds."""
        now = self._clock()
        async with self._units(read_only=True) as uow:
            return await uow.outbox.chats_waiting(now - older_than, now)

    async def boards_sent(
        self, entry_ids: Sequence[int], game_id: int, version: int, message_id: int
    ) -> None:
        """Mark the rows sent and store that ``message_id`` shows board ``version``, at once.

        One transaction: a board is never marked sent without the record of its
        message (reaction times start there), nor recorded and left unsent.
        """
        shown = ShownBoard(game_id, version, message_id, self._clock())
        async with self._units() as uow:
            await uow.outbox.settle(
                entry_ids, OutboxState.SENT, self._clock(), message_id=shown.message_id
            )
            await uow.board_views.record([shown])

    async def boards_failed(self, entry_ids: Sequence[int], error: str) -> None:
        """Mark the rows failed for good (Telegram refused them): they are not tried again."""
        async with self._units() as uow:
            await uow.outbox.settle(entry_ids, OutboxState.FAILED, self._clock(), error=error[:200])

    async def claim(self, chat_id: int, owner: str, lease: timedelta) -> bool:
        """Lease the chat's sending to ``owner`` for ``lease`` (False: another owner holds it)."""
        now = self._clock()
        async with self._units() as uow:
            return await uow.outbox.claim(chat_id, owner, now, now + lease)

    async def release(self, chat_id: int, owner: str) -> None:
        """Give up ``owner``'s lease of the chat."""
        async with self._units() as uow:
            await uow.outbox.release(chat_id, owner)

    async def with_states(
        self,
        keys: Sequence[int],
        step: Callable[[list[dict[str, Any]]], tuple[list[dict[str, Any]], T]],
    ) -> T:
        """Run ``step`` on the stored pace states of ``keys`` (chats; 0: the whole bot).

        The states are opaque here (the bot's flood-limit windows). Their rows are
        locked (in one order, so two workers never wait for each other) until the
        states ``step`` returns are stored, so the workers that share the database
        take their turns one at a time.
        """
        async with self._units() as uow:
            rows = {key: await uow.outbox.locked_pace(key) for key in sorted(set(keys))}
            states, result = step([dict(rows[key].pace or {}) for key in keys])
            for key, state in zip(keys, states, strict=True):
                rows[key].pace = state
            return result

    async def forget_settled(self, older_than: timedelta) -> int:
        """Delete rows settled longer than ``older_than`` ago; how many were deleted."""
        async with self._units() as uow:
            return await uow.outbox.forget_settled(self._clock() - older_than)
