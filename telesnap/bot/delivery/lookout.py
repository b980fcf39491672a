"""The look-out: rows nobody sends get a sender, and idle leases are given up.

Each worker wakes the senders of chats whose rows waited past :data:`GRACE` (their worker died,
or a start found them); the chat's lease decides who sends them. Once an hour it deletes the
rows settled more than :data:`SETTLED_KEPT` ago.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from ...services.outbox.service import OutboxService
from ...support.loops import BackgroundLoop
from ...support.retry import Backoff
from .sender import Senders

__all__ = ["GRACE", "LOOK_EVERY_S", "Lookout"]

logger = logging.getLogger(__name__)

LOOK_EVERY_S = 2.0
"""How often unsent rows nobody sends are looked for."""
GRACE = timedelta(seconds=5)
"""Rows younger than this are left to the worker that committed them."""
SETTLED_KEPT = timedelta(days=2)
"""How long sent and failed rows are kept (to look into what was sent) before they go."""
CLEAN_EVERY_S = 3600.0


class Lookout:
    """Looks for unsent rows nobody sends (at once at its start, then every ``every_s``)."""

    def __init__(
        self,
        senders: Senders,
        outbox: OutboxService,
        *,
        grace: timedelta = GRACE,
        every_s: float = LOOK_EVERY_S,
    ) -> None:
        self._senders = senders
        self._outbox = outbox
        self._grace = grace
        self._every_s = every_s
        self._since_cleanup = CLEAN_EVERY_S  # clean up soon after start
        self._loop = BackgroundLoop(
            self._round,
            what="looking for unsent rows",
            logger=logger,
            backoff=Backoff(every_s, every_s),
            name="outbox-look",
        )

    def start(self) -> None:
        """Look at once, then every ``every_s``."""
        self._loop.start()

    async def stop(self) -> None:
        """Stop looking."""
        await self._loop.stop()

    async def look_once(self) -> int:
        """One look: give idle leases up, wake chats whose rows nobody sends; how many it woke."""
        await self._senders.release_idle()
        woken = 0
        for chat_id in await self._outbox.waiting(self._grace):
            if self._senders.is_sending(chat_id):
                continue
            self._outbox.forget(chat_id)  # the database says they wait: read them from it
            self._senders.wake(chat_id)
            woken += 1
        return woken

    async def _round(self) -> float:
        await self.look_once()
        self._since_cleanup += self._every_s
        if self._since_cleanup >= CLEAN_EVERY_S:
            self._since_cleanup = 0.0
            await self._outbox.forget_settled(SETTLED_KEPT)
        return self._every_s
