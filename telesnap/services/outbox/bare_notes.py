"""Notes that a message's buttons come off, written before they do.

A start then does not take them off again (Telegram refuses that), and a kill between leaves
them on only rarely. A note rides with the next group commit, or has one of its own after
:data:`NOTE_WITHIN_S` when none comes: a busy bot pays no commit for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ...storage.uow import GroupCommit, UnitOfWork
from ...support.bounded import BoundedDict
from ...support.retry import short_cause

__all__ = ["NOTE_WITHIN_S", "BareNotes"]

logger = logging.getLogger(__name__)

NOTE_WITHIN_S = 0.01
"""How long a note of buttons coming off waits for a group commit to take it along."""
NOTES_KEPT = 4096
"""How many messages whose buttons came off one process remembers."""


class BareNotes:
    """The notes of one process, written in its group commit."""

    def __init__(self, together: GroupCommit) -> None:
        self._together = together
        self._to_note: set[tuple[int, int]] = set()
        """Messages (chat, message) whose buttons come off, to note with the next commit."""
        self._noting: set[tuple[int, int]] = set()
        """Those noted in the transaction under way (noted again with the next if it fails)."""
        self._noted = asyncio.Event()
        """Set by each commit that notes buttons coming off (then a new one waits)."""
        self._done: BoundedDict[tuple[int, int], None] = BoundedDict(NOTES_KEPT)
        """The messages whose buttons this process took off lately (noted and written)."""

    def took_off(self, chat_id: int, message_id: int) -> bool:
        """Whether this process has taken, or is taking, that message's buttons off."""
        key = (chat_id, message_id)
        return key in self._done or key in self._to_note or key in self._noting

    async def note(self, chat_id: int, message_id: int) -> None:
        """Note that a message's buttons come off, before they do (a failure is logged)."""
        key = (chat_id, message_id)
        self._to_note.add(key)
        self._together.ride_along(self._write)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._noted.wait(), NOTE_WITHIN_S)
        except asyncio.CancelledError:  # a stop: they do not come off, so no note either
            self._to_note.discard(key)
            raise
        if key in self._to_note or key in self._noting:  # no commit came, or it failed
            try:
                await self.write()
            except Exception as error:  # they come off all the same: a tidy chat first
                logger.warning(
                    "chat %s: could not note message %s's buttons off (%s)",
                    chat_id,
                    message_id,
                    short_cause(error),
                )

    async def withdraw(self, chat_id: int, message_id: int) -> None:
        """Take the note back: the buttons did not come off (the send failed; it is tried again).

        A start after a kill is then to take them off. A failure is logged.
        """
        key = (chat_id, message_id)
        self._to_note.discard(key)
        self._done.pop(key, None)

        async def unnote(uow: UnitOfWork) -> None:
            await uow.outbox.mark_bared({key}, bared=False)

        try:
            await self._together.write(unnote)
        except Exception as error:
            logger.warning(
                "chat %s: could not withdraw the note of message %s's buttons off (%s)",
                chat_id,
                message_id,
                short_cause(error),
            )

    async def write(self) -> None:
        """Write the notes no commit has taken along yet (one that failed rides the next)."""
        if self._to_note or self._noting:
            await self._together.write(self._write)

    async def _write(self, uow: UnitOfWork) -> None:
        self._noting |= self._to_note
        self._to_note = set()
        uow.after_commit(self._written)
        await uow.outbox.mark_bared(self._noting)

    def _written(self) -> None:
        for key in self._noting:
            self._done[key] = None
        self._noting.clear()
        self._noted.set()
        self._noted = asyncio.Event()
