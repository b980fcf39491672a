"""The referee: has each stored Snap race decided when its window closes, and tells the callers.

Before deciding it waits for every call stamped inside the window that is still on its way
through the process; a failed decision is retried with backoff until the race has ended.
Every waiting caller is answered however the race ended. A race another worker opened and
never decided (stopped or killed) is adopted by the next Flip that finds it open or by any
worker's :class:`RaceSweeper`; a dead worker's callers are answered by whoever decides or
reads back their race (:mod:`.callers`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from telegram import Bot

from ...services.play.races import AnswerPledges, OpenRace, RaceService
from ...services.types import Place, Topic
from ...services.views import RaceOutcome
from ...support.loops import BackgroundLoop
from ...support.retry import Backoff, retry
from ..ingress.receipts import ReceiptBook
from ..render.i18n import translator
from ..render.texts import race_delayed_toast
from ..render.toasts import answer_toast
from .callers import CallerPledges, race_toast

logger = logging.getLogger(__name__)

FIRST_RETRY_S = 0.1
LAST_RETRY_S = 30.0
ANSWER_WITHIN_S = 5.0
"""Callers still waiting this long after a first failed decision are told it is delayed
(Telegram stops taking an answer to a press some 15 s after it was made)."""


ADOPT_GRACE_S = 1.0
"""How long after its deadline a race opened by another worker is decided here."""
DECIDE_AT_STOP_S = 5.0
"""How long a stopping worker waits for the races in hand to be decided."""
SETTLED_KEPT_S = 60.0
"""How long a decided race is remembered, for a Flip pressed during it and handled after it."""
SWEEP_EVERY_S = 1.5
"""How often every worker looks for overdue races that nobody decides."""


@dataclass(frozen=True, slots=True)
class JoinedCall:
    """A correct call in a stored race: which race, and the board it was made on."""

    race_id: int
    game_id: int
    deadline_ns: int
    board_version: int


@dataclass(frozen=True, slots=True)
class Waiter:
    """A caller whose button press is answered once the race is decided."""

    query_id: str
    user_id: int
    language: str
    received_ns: int | None = None
    """The press's receipt stamp: retries of the answer stop before the press expires."""


@dataclass(eq=False)
class _Race:
    place: Place
    race_id: int
    game_id: int
    deadline_ns: int
    board_before: int | None
    """The board the race was run on (None: not known here)."""
    collected: bool = False
    """Calls were taken here while it ran (not only adopted, or decided at start)."""
    waiters: list[Waiter] = field(default_factory=list)
    waited_for: set[int] = field(default_factory=set)
    """The users whose presses are answered here (also once told of a delay)."""
    own_queries: set[str] = field(default_factory=set)
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    decided_ns: int | None = None
    """When the decision was known here (wall-clock ns, like the receipt stamps)."""
    board_after: int | None = None
    """The board the race left behind (see :attr:`RaceOutcome.board_version`)."""


class RaceReferee:
    """Schedules and decides the open races, one per chat topic."""

    def __init__(
        self,
        bot: Bot,
        races: RaceService,
        book: ReceiptBook,
        *,
        answer_within_s: float = ANSWER_WITHIN_S,
        pledges: AnswerPledges | None = None,
    ) -> None:
        """Referee the races of ``races``, answering presses through ``bot``.

        ``pledges`` let a dead worker's callers be answered here (None: only its own callers).
        """
        self._bot = bot
        self._callers = None if pledges is None else CallerPledges(bot, races, pledges)
        self._answer_within_s = answer_within_s
        self._races_service = races
        self._book = book
        self._races: dict[Topic, _Race] = {}
        self._settled: dict[Topic, _Race] = {}
        self._forget_settled: dict[Topic, asyncio.TimerHandle] = {}
        self._deciding: set[asyncio.Task[None]] = set()

    def call_joined(self, place: Place, call: JoinedCall, waiter: Waiter | None) -> None:
        """A correct call joined a stored race, which closes at ``call.deadline_ns``."""
        key = place.topic
        race = self._races.get(key)
        if race is None or race.decided.is_set() or race.race_id != call.race_id:
            race = _Race(place, call.race_id, call.game_id, call.deadline_ns, call.board_version)
            self._start(key, race)
        race.deadline_ns = min(race.deadline_ns, call.deadline_ns)
        race.collected = True
        if race.board_before is None:  # adopted, or decided at start: now we know its board
            race.board_before = call.board_version
        if waiter is not None:
            race.waiters.append(waiter)
            race.waited_for.add(waiter.user_id)
            race.own_queries.add(waiter.query_id)
            if self._callers is not None:
                self._callers.hold(waiter.query_id, waiter.received_ns)

    async def wait_until_decided(self, place: Place, timeout_s: float = 5.0) -> int | None:
        """Wait for the topic's open race (if any) to end; return the board it left behind.

        None if there is no race here, it outlasts ``timeout_s``, or the game has moved on.
        """
        race = self._races.get(place.topic)
        if race is None:
            return None
        try:
            async with asyncio.timeout(timeout_s):
                await race.decided.wait()
        except TimeoutError:
            logger.warning(
                "race %d of game %d in %s not decided after %.1f s",
                race.race_id,
                race.game_id,
                place,
                timeout_s,
            )
            return None
        return race.board_after

    def decide_now(self, race: OpenRace) -> None:
        """Have a stored race decided at once (after a restart).

        The stopped process's unhandled calls are in the inbox; they join it if handled first.
        """
        decided_ns = time.time_ns()
        self._start(
            race.place.topic, _Race(race.place, race.race_id, race.game_id, decided_ns, None)
        )

    def is_deciding(self, place: Place) -> bool:
        """Whether this referee has the topic's race in hand (it may be another worker's)."""
        race = self._races.get(place.topic)
        return race is not None and not race.decided.is_set()

    def adopt(self, race: OpenRace) -> None:
        """Decide a race another worker opened (it may have stopped before deciding it).

        Decided ``ADOPT_GRACE_S`` after its (wall-clock, so cross-host) deadline, so a live
        owner, which waits for the calls on their way through it, decides first.
        """
        if self.is_deciding(race.place):
            return
        due_ns = int(race.deadline_at.timestamp() * 1e9) + int(ADOPT_GRACE_S * 1e9)
        self._start(race.place.topic, _Race(race.place, race.race_id, race.game_id, due_ns, None))

    def _start(self, key: Topic, race: _Race) -> None:
        self._races[key] = race
        task = asyncio.create_task(self._decide(key, race))
        self._deciding.add(task)
        task.add_done_callback(self._deciding.discard)

    def board_after_race(self, place: Place, pressed_version: int, stamp_ns: int) -> int | None:
        """The board left by the race that was being decided on ``pressed_version`` at ``stamp_ns``.

        A press made before the decision but handled after it acts on that board, if nothing
        else has changed the game since. None when no such race is known here.
        """
        race = self._settled.get(place.topic)
        if race is None or race.decided_ns is None or race.board_before != pressed_version:
            return None
        return race.board_after if stamp_ns <= race.decided_ns else None

    async def _decide(self, key: Topic, race: _Race) -> None:
        try:
            # The deadline can move earlier while we sleep (an earlier stamp arrived late).
            while (delay_ns := race.deadline_ns - time.time_ns()) > 0:  # noqa: ASYNC110
                await asyncio.sleep(min(delay_ns / 1e9, 0.05))
            await self._book.wait_for_calls(key, race.deadline_ns)
            outcome = await self._decide_with_retries(race)
            race.decided_ns = time.time_ns()
            race.board_after = outcome.board_version
            self._settle(key, race)
        finally:
            race.decided.set()
            if self._races.get(key) is race:
                del self._races[key]  # nothing waits for a decided race
        await self._answer_waiters(race, outcome)
        if self._callers is not None:
            await self._callers.answer_orphans(
                race.race_id,
                outcome,
                waited_for=race.waited_for,
                own_queries=race.own_queries,
                collected=race.collected,
            )

    def _settle(self, key: Topic, race: _Race) -> None:
        """Remember the decided race for a while (see :meth:`board_after_race`)."""
        self._settled[key] = race
        if (handle := self._forget_settled.pop(key, None)) is not None:
            handle.cancel()

        def forget() -> None:
            self._forget_settled.pop(key, None)
            if self._settled.get(key) is race:
                del self._settled[key]

        loop = asyncio.get_running_loop()
        self._forget_settled[key] = loop.call_later(SETTLED_KEPT_S, forget)

    async def _decide_with_retries(self, race: _Race) -> RaceOutcome:
        """Decide the race; on failure log it, and try again with a growing delay.

        Callers still waiting ``answer_within_s`` after the first failure are told it is delayed,
        at that moment, not at the next failure after it.
        """
        late: asyncio.Task[None] | None = None
        telling = False

        async def tell_waiters_late() -> None:
            nonlocal telling
            await asyncio.sleep(self._answer_within_s)
            telling = True
            waiters, race.waiters = race.waiters, []
            toasts = [self._answer(w, race_delayed_toast(translator(w.language))) for w in waiters]
            await asyncio.gather(*toasts)

        async def after_failure() -> None:
            nonlocal late
            if late is None:
                late = asyncio.create_task(tell_waiters_late())

        try:
            return await retry(
                partial(self._races_service.decide, race.place, race.race_id),
                Backoff(FIRST_RETRY_S, LAST_RETRY_S),
                logger=logger,
                what=f"deciding race {race.race_id} of game {race.game_id} in chat"
                f" {race.place.chat_id} topic {race.place.thread_id}",
                after_failure=after_failure,
            )
        finally:
            if late is not None:
                if telling:
                    await late  # the delayed toasts are on their way: they finish
                else:
                    late.cancel()

    async def _answer_waiters(self, race: _Race, outcome: RaceOutcome) -> None:
        # All at once: no caller waits for another's answer (or its retries).
        answers = [
            self._answer(waiter, race_toast(outcome, waiter.user_id, waiter.language))
            for waiter in race.waiters
        ]
        await asyncio.gather(*answers)

    async def _answer(self, waiter: Waiter, text: str) -> None:
        await answer_toast(self._bot, waiter.query_id, text, received_ns=waiter.received_ns)

    async def close(self, decide_within_s: float = DECIDE_AT_STOP_S) -> None:
        """Decide the races in hand (for ``decide_within_s`` at most), then cancel the rest.

        A race left open would wait for another worker's :class:`RaceSweeper`, delaying its
        callers' board. No call is awaited (the dispatcher has drained). A race still undecided
        (the database is down, say) is cancelled and logged; a sweeper or a restart decides it.
        """
        self._book.release_all()
        for handle in self._forget_settled.values():
            handle.cancel()
        self._forget_settled.clear()
        tasks = list(self._deciding)
        if tasks:
            await asyncio.wait(tasks, timeout=decide_within_s)
        self._settled.clear()
        for key, race in list(self._races.items()):
            logger.warning(
                "stopping with race %d of game %d in %s undecided", race.race_id, race.game_id, key
            )
        tasks = list(self._deciding)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._callers is not None:
            await self._callers.close()


class RaceSweeper:
    """Has the referee adopt the stored races that nobody decides.

    A worker killed during a race's window leaves it open, and its callers just wait for the
    board. Each look is one read of the open races; a race is decided once however many
    workers adopt it.
    """

    def __init__(
        self,
        referee: RaceReferee,
        races: RaceService,
        *,
        period_s: float = SWEEP_EVERY_S,
        now_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._referee = referee
        self._races = races
        self._period_s = period_s
        self._now_ns = now_ns
        self._loop = BackgroundLoop(
            self._round,
            what="looking for overdue races",
            logger=logger,
            backoff=Backoff(period_s, max(period_s, LAST_RETRY_S)),
            name="race-sweeper",
        )

    def start(self) -> None:
        """Start looking, in the background."""
        self._loop.start()

    async def stop(self) -> None:
        """Stop looking (the races adopted already are the referee's to finish)."""
        await self._loop.stop()

    async def sweep(self) -> int:
        """Look once: adopt every overdue race not in hand here; return how many."""
        overdue_before_ns = self._now_ns() - int(ADOPT_GRACE_S * 1e9)
        adopted = 0
        for race in await self._races.overdue_races(overdue_before_ns):
            if self._referee.is_deciding(race.place):
                continue
            logger.warning(
                "race %d of game %d in chat %d topic %d is overdue and nobody decides it: "
                "adopting it",
                race.race_id,
                race.game_id,
                race.place.chat_id,
                race.place.thread_id,
            )
            self._referee.adopt(race)
            adopted += 1
        return adopted

    async def _round(self) -> float:
        await self.sweep()
        return self._period_s
