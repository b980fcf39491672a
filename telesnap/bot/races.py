"""The referee: decides each Snap race when its tie window closes, and tells the callers.

A correct call opens a race whose window closes ``tie_window_ms`` after the
earliest stamp. The referee sleeps until then, waits for any call stamped
inside the window that is still on its way through the process, asks the
play service to decide, answers every waiting caller's button press with
their own result, and shows the new table.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from telegram import Bot

from ..services.play import PlayService
from ..services.types import Place
from ..services.views import RaceOutcome
from .i18n import translator
from .receipts import ReceiptBook
from .texts import verdict_toast
from .toasts import answer_toast

logger = logging.getLogger(__name__)

TopicKey = tuple[int, int]
ShowRace = Callable[[Place, RaceOutcome], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Waiter:
    """A caller whose button press is answered once the race is decided."""

    query_id: str
    user_id: int
    language: str


@dataclass(eq=False)
class _Race:
    place: Place
    deadline_ns: int
    waiters: list[Waiter] = field(default_factory=list)
    decided: asyncio.Event = field(default_factory=asyncio.Event)


class RaceReferee:
    """Schedules and decides the open races, one per chat topic."""

    def __init__(self, bot: Bot, play: PlayService, book: ReceiptBook, show: ShowRace) -> None:
        self._bot = bot
        self._play = play
        self._book = book
        self._show = show
        self._races: dict[TopicKey, _Race] = {}
        self._deciding: set[asyncio.Task[None]] = set()

    def call_joined(self, place: Place, deadline_ns: int, waiter: Waiter | None) -> None:
        """A correct call joined the topic's race, which closes at ``deadline_ns``."""
        key = (place.chat_id, place.thread_id)
        race = self._races.get(key)
        if race is None or race.decided.is_set():
            race = self._races[key] = _Race(place, deadline_ns)
            task = asyncio.create_task(self._decide(key, race))
            self._deciding.add(task)
            task.add_done_callback(self._deciding.discard)
        race.deadline_ns = min(race.deadline_ns, deadline_ns)
        if waiter is not None:
            race.waiters.append(waiter)

    async def wait_until_decided(self, place: Place, timeout_s: float = 5.0) -> None:
        """Wait for the topic's open race (if any) to be decided."""
        race = self._races.get((place.chat_id, place.thread_id))
        if race is not None and not race.decided.is_set():
            try:
                async with asyncio.timeout(timeout_s):
                    await race.decided.wait()
            except TimeoutError:
                logger.warning("race in %s not decided after %.1f s", place, timeout_s)

    async def _decide(self, key: TopicKey, race: _Race) -> None:
        try:
            # The deadline can move earlier while we sleep (an earlier stamp arrived late).
            while (delay_ns := race.deadline_ns - time.monotonic_ns()) > 0:  # noqa: ASYNC110
                await asyncio.sleep(min(delay_ns / 1e9, 0.05))
            await self._book.wait_for_calls(key, race.deadline_ns)
            outcome = await self._play.resolve_race(race.place)
        except Exception:
            logger.exception("deciding the race in %s failed", race.place)
            outcome = None
        finally:
            race.decided.set()
            if self._races.get(key) is race:
                del self._races[key]  # a decided race needs no entry: nothing waits for it
        if outcome is None:
            return
        for waiter in race.waiters:
            result = outcome.result_of(waiter.user_id)
            if result is None:
                continue
            text = verdict_toast(result.verdict, result.behind_ms, translator(waiter.language))
            await self._answer(waiter.query_id, text)
        await self._show(race.place, outcome)

    async def _answer(self, query_id: str, text: str) -> None:
        await answer_toast(self._bot, query_id, text)

    async def close(self) -> None:
        """Cancel the races still waiting (they are decided again after a restart)."""
        tasks = list(self._deciding)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
