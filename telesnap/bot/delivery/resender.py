"""Taking over rows nobody is sending: a dead worker's, or those a stop left behind.

A board, lobby or notice committed by a change is normally sent at once by the
worker that made the change (or by the worker that holds the chat's lease: see
:class:`telesnap.services.outbox.service.OutboxService`). When that worker dies, its
chats' rows stay unsent and its leases lapse (on PostgreSQL at once: its owner
lock goes with its connection, see :mod:`telesnap.storage.liveness`); every
worker looks for such chats every few seconds (:class:`Resender`) and takes
them over, so whatever was
committed is shown, whichever worker survives. Once an hour it also deletes
the rows sent or set aside more than two days ago, so the table does not grow
for ever.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from ...services.outbox.service import OutboxService
from ...support.loops import BackgroundLoop
from ...support.retry import Backoff
from .presenter import Presenter

logger = logging.getLogger(__name__)

SETTLED_KEPT = timedelta(days=2)
"""How long sent and failed rows are kept (to look into what was sent) before they go."""


@dataclass(frozen=True)
class ResendPolicy:
    """How often to look for boards nobody sends, and how old they must be to take them."""

    interval_s: float = 2.0
    grace: timedelta = timedelta(seconds=5)
    """A board younger than this is left to the worker that committed it."""
    cleanup_every_s: float = 3600.0


class Resender:
    """Looks for chats whose boards nobody is sending, and sends them (in the background)."""

    def __init__(
        self, presenter: Presenter, outbox: OutboxService, policy: ResendPolicy | None = None
    ) -> None:
        """Send through ``presenter`` what ``outbox`` has unsent, as ``policy`` says."""
        self._presenter = presenter
        self._outbox = outbox
        self._policy = policy or ResendPolicy()
        self._since_cleanup = 0.0
        # The database is down, say: the next round, an interval later, tries again.
        every = Backoff(self._policy.interval_s, self._policy.interval_s)
        self._loop = BackgroundLoop(
            self._round, what="looking for unsent boards", logger=logger, backoff=every
        )

    def start(self) -> None:
        """Start looking (every ``interval_s``)."""
        if not self._loop.running:
            self._since_cleanup = self._policy.cleanup_every_s  # clean up soon after start
            self._loop.start()

    async def stop(self) -> None:
        """Stop looking."""
        await self._loop.stop()

    async def run_once(self) -> int:
        """Take over every chat with rows nobody sends; how many chats were taken."""
        taken = 0
        for chat_id in await self._outbox.chats_waiting(self._policy.grace):
            try:
                if await self._presenter.show_unsent(chat_id):
                    taken += 1
            except Exception:
                logger.exception("chat %s: taking over its unsent rows failed", chat_id)
        if taken:
            logger.info("took over the unsent rows of %d chats", taken)
        return taken

    async def _round(self) -> float:
        interval = self._policy.interval_s
        try:
            await self.run_once()
            if self._since_cleanup >= self._policy.cleanup_every_s:
                self._since_cleanup = 0.0
                await self._outbox.forget_settled(SETTLED_KEPT)
        finally:
            self._since_cleanup += interval
        return interval
