"""The update queue: long polling with getUpdates, or delivery to a webhook.

Updates get sequential ids. Polling hands out the unconfirmed ones and forgets
those below the ``offset`` of a later call. A webhook gets each update by POST,
one chat's updates strictly in order, retrying with backoff until it answers 2xx.
Every hand-over is recorded with its monotonic and wall time.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from ..support.retry import Backoff
from .changes import ChangeSignal
from .config import Clock, EmulatorConfig
from .errors import ApiError
from .records import Delivery, UpdateRecord

WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
TERMINATED_BY_OTHER_POLL = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)


@dataclass
class Webhook:
    """The webhook the bot set, and how delivering to it has gone."""

    url: str
    secret_token: str | None
    max_connections: int
    last_error_date: int | None = None
    last_error_message: str | None = None


class UpdateHub:
    """Produce updates and hand them to the bot by polling or webhook."""

    def __init__(self, config: EmulatorConfig, on_change: Callable[[], None]) -> None:
        self._config = config
        self._clock: Clock = config.clock
        self._on_change = on_change
        self.history: deque[UpdateRecord] = deque(maxlen=config.log_limit)
        """The latest ``config.log_limit`` updates (and redeliveries), oldest first."""
        self.pending: deque[UpdateRecord] = deque()
        self.webhook: Webhook | None = None
        self.paused = False
        self._last_update_id = 0
        self._polls_begun = 0
        self._arrived = ChangeSignal()
        self._workers: dict[int | None, asyncio.Task[None]] = {}
        self._session: aiohttp.ClientSession | None = None
        self._closing = False

    @property
    def last_update_id(self) -> int:
        """The id of the latest update; the next one gets a higher id, never a reused one."""
        return self._last_update_id

    def continue_after(self, update_id: int) -> None:
        """Number the next updates after ``update_id`` (one an earlier run handed out)."""
        self._last_update_id = max(self._last_update_id, update_id)

    def enqueue(self, kind: str, body: dict[str, Any], chat_id: int | None) -> UpdateRecord:
        """Add an update of ``kind`` (e.g. ``message``) carrying ``body``."""
        self._last_update_id += 1
        update = UpdateRecord(
            self._last_update_id,
            kind,
            chat_id,
            {"update_id": self._last_update_id, kind: body},
            self._clock(),
            time.time(),
        )
        self._remember(update)
        self.pending.append(update)
        self._changed()
        self._start_webhook_worker(chat_id)
        return update

    def _remember(self, update: UpdateRecord) -> None:
        self.history.append(update)

    def redeliver(self, update_id: int) -> UpdateRecord:
        """Hand an update over again, as Telegram does when it thinks it was not received."""
        original = next((u for u in self.history if u.update_id == update_id), None)
        if original is None:
            raise ValueError(f"no update {update_id}")
        again = UpdateRecord(
            update_id,
            original.kind,
            original.chat_id,
            original.payload,
            self._clock(),
            time.time(),
            redelivery=True,
        )
        self._remember(again)
        self.pending.appendleft(again)
        self._changed()
        self._start_webhook_worker(original.chat_id)
        return again

    def set_paused(self, paused: bool) -> None:
        """Hold back (or release) every update not yet handed to the bot."""
        self.paused = paused
        self._changed()
        if not paused:
            for chat_id in {update.chat_id for update in self.pending}:
                self._start_webhook_worker(chat_id)

    @property
    def has_unconfirmed(self) -> bool:
        """Whether some update still waits to be handed over or confirmed."""
        return bool(self.pending)

    async def get_updates(self, offset: int | None, limit: int, poll_seconds: float) -> list[Any]:
        """Answer getUpdates: confirm below ``offset``, then wait ``poll_seconds`` for some.

        One poll waits at a time: a newer one ends the waiting one with 409, as Telegram does.
        """
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_CONFLICT)
        self._polls_begun += 1
        this_poll = self._polls_begun
        self._arrived.notify()
        if offset is not None:
            self._confirm_below(offset)
        limit = min(max(limit, 1), 100)
        await self._arrived.wait_until(
            lambda: bool(self._deliverable()) or self._closing or self._polls_begun != this_poll,
            poll_seconds,
        )
        if self._polls_begun != this_poll:
            raise ApiError(409, TERMINATED_BY_OTHER_POLL)
        batch = self._deliverable()[:limit]
        for update in batch:
            update.deliveries.append(Delivery(self._clock(), time.time(), "getUpdates"))
        if batch:
            self._changed()
        return [update.payload for update in batch]

    def _deliverable(self) -> list[UpdateRecord]:
        return [] if self.paused or self.webhook else list(self.pending)

    def _confirm_below(self, offset: int) -> None:
        """Confirm (and forget) the updates below ``offset``, fetched or not, as Telegram does.

        A negative offset keeps only the last ``-offset`` updates of the queue. A redelivery
        not yet handed over stays: the bot's offset is past its id already.
        """
        queue = list(self.pending)
        first_kept = max(len(queue) + offset, 0)
        self.pending = deque()
        for position, update in enumerate(queue):
            if offset < 0:
                waits = position >= first_kept
            else:
                waits = update.update_id >= offset or (update.redelivery and not update.deliveries)
            if waits:
                self.pending.append(update)
            else:
                update.confirmed = True
        self._changed()

    def drop_pending(self) -> None:
        """Forget every update not yet confirmed (``drop_pending_updates``)."""
        self.pending.clear()
        self._changed()

    async def set_webhook(self, webhook: Webhook | None) -> None:
        """Install ``webhook`` (``None`` removes it) and start delivering to it."""
        await self._stop_workers()
        self.webhook = webhook
        self._changed()
        if webhook is not None:
            for chat_id in {update.chat_id for update in self.pending}:
                self._start_webhook_worker(chat_id)

    async def close(self) -> None:
        """Release long polls, stop webhook delivery and close the HTTP session."""
        self._closing = True
        self._changed()
        await self._stop_workers()
        if self._session is not None:
            await self._session.close()

    def _changed(self) -> None:
        self._arrived.notify()
        self._on_change()

    def _start_webhook_worker(self, chat_id: int | None) -> None:
        if self.webhook is None or self.paused or self._closing:
            return
        worker = self._workers.get(chat_id)
        if worker is None or worker.done():
            self._workers[chat_id] = asyncio.get_running_loop().create_task(
                self._deliver_chat(self.webhook, chat_id)
            )

    async def _stop_workers(self) -> None:
        workers = list(self._workers.values())
        self._workers.clear()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    async def _deliver_chat(self, webhook: Webhook, chat_id: int | None) -> None:
        while not self.paused:
            update = next((u for u in self.pending if u.chat_id == chat_id), None)
            if update is None:
                return
            first_s = self._config.webhook_retry_initial
            backoff = Backoff(first_s, max(first_s, self._config.webhook_retry_max))
            while not await self._post(webhook, update):
                await asyncio.sleep(backoff.next())
                if self.paused:
                    return
            update.confirmed = True
            if update in self.pending:
                self.pending.remove(update)
            self._changed()

    async def _post(self, webhook: Webhook, update: UpdateRecord) -> bool:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {}
        if webhook.secret_token:
            headers["X-Telegram-Bot-Api-Secret-Token"] = webhook.secret_token
        update.deliveries.append(Delivery(self._clock(), time.time(), "webhook"))
        self._changed()
        try:
            timeout = aiohttp.ClientTimeout(total=self._config.webhook_timeout)
            async with self._session.post(
                webhook.url, json=update.payload, headers=headers, timeout=timeout
            ) as response:
                await response.read()
                if 200 <= response.status < 300:
                    return True
                error = f"Wrong response from the webhook: {response.status} {response.reason}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = f"Connection failed: {exc!r}"
        webhook.last_error_date = int(time.time())
        webhook.last_error_message = error
        return False
