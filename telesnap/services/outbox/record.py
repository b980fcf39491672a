"""What a change of a game must show is written in its own transaction: its board row.

A change players must see writes one outbox row in its own unit of work
(:func:`record_boards` subscribes to :class:`~..play.events.GameChanged`), so a committed
change is never lost with the process that made it. The row says *what* to show, as JSON;
the bot renders *how* at send time, in the chat's language.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...game import CallVerdict, Operation, SnapCalled
from ...storage.models import Game as GameRow
from ...storage.models import GameStatus
from ...storage.uow import UnitOfWork
from ..play.events import GameChanged
from ..play.store import GameStore
from ..views import PlayOutcome, play_to_json
from .rows import BOARD, Notice, keep_board


def shows_a_board(operations: Sequence[Operation]) -> bool:
    """Whether a change with ``operations`` is shown on a board.

    A call alone is shown only when wrong: a correct one waits for its race's decision, and a
    slow or late one is told to its caller alone.
    """
    return any(
        not isinstance(op, SnapCalled) or op.verdict is CallVerdict.WRONG for op in operations
    )


async def write_board(
    uow: UnitOfWork, row: GameRow, board: PlayOutcome, notes: Sequence[Notice] = ()
) -> None:
    """Write the board a change of ``row``'s game shows (``notes``: why, above its events)."""
    payload = play_to_json(board)
    if notes:
        payload["notes"] = [note.to_json() for note in notes]
    written = await uow.outbox.add(
        row.chat_id,
        row.thread_id,
        BOARD,
        payload,
        game_id=row.id,
        board_version=board.table.board_version,
    )
    keep_board(written, board)


def record_boards(store: GameStore) -> None:
    """Make every change of ``store``'s games that players must see write its outbox row."""

    async def record_board(uow: UnitOfWork, event: GameChanged) -> None:
        if not shows_a_board(event.operations):
            return
        row = event.row
        loaded = store.cached(row.id)
        if loaded is None:
            # A game that just started or ended is not (or no longer) in the cache.
            loaded = await store.load(uow, row)
            if row.status != GameStatus.RUNNING.value:
                store.forget(row.id)
        await write_board(uow, row, PlayOutcome(loaded.table(), event.operations))

    store.events.subscribe(GameChanged, record_board)
