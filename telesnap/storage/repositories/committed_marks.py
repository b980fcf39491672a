"""Which updates need no processed mark again: kept in memory beside the inbox."""

from __future__ import annotations

from collections.abc import Sequence

from ...support.bounded import BoundedDict

__all__ = ["MARKS_KEPT", "CommittedMarks"]

MARKS_KEPT = 4096
"""How many updates marked by committed changes are remembered (the newest)."""


class CommittedMarks:
    """The updates this process's committed changes marked processed, until their handlers end.

    Remembered only once the mark commits, so each is processed for good. Content goes once
    handlers end (:meth:`InboxRepository.empty_finished`): a processed press still holding it
    was perhaps never answered (:meth:`InboxRepository.take_unfinished_presses`).
    """

    def __init__(self, capacity: int = MARKS_KEPT) -> None:
        self._marked: BoundedDict[int, None] = BoundedDict(capacity)
        self._finished: list[int] = []

    def add(self, update_ids: Sequence[int]) -> None:
        """Remember updates whose marking transaction has committed."""
        for update_id in update_ids:
            self._marked[update_id] = None

    def take(self, update_id: int) -> bool:
        """Whether a committed change marked ``update_id`` (forgotten once asked)."""
        if update_id not in self._marked:
            return False
        del self._marked[update_id]
        return True

    def finish(self, update_id: int) -> None:
        """Its handlers are done: its content may go."""
        self._finished.append(update_id)

    def take_finished(self) -> list[int]:
        """The updates whose content may go (given back if their transaction fails)."""
        finished, self._finished = self._finished, []
        return finished

    def give_back(self, update_ids: Sequence[int]) -> None:
        """Updates taken by :meth:`take_finished` whose transaction rolled back."""
        self._finished[:0] = update_ids
