"""Every caller of a race hears its result, also when the worker that took their press died.

A worker killed while its race collects leaves its calls committed and the race decided
elsewhere (:mod:`.races`), but nobody to answer the presses. So a worker *pledges* each
press it is to answer (:class:`AnswerPledges`: an advisory lock every worker sees, held
until the press expires, dropped with a dead worker's connection), and whoever decides or
reads back a race answers the unpledged callers while their presses can still be answered.
A race collected here waits :data:`PLEDGE_GRACE_S` first: a live worker pledges its
caller's press just after the call's transaction commits.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection

from telegram import Bot, Update

from ...services.play.races import AnswerPledges, RaceCaller, RaceService
from ...services.views import RaceEnding, RaceOutcome
from ..render.i18n import language_of, translator
from ..render.texts import race_called_off_toast, race_over_toast, verdict_toast
from ..render.toasts import answer_toast, expires_ns, last_try_ns

logger = logging.getLogger(__name__)

__all__ = ["PLEDGE_GRACE_S", "CallerPledges", "race_toast"]

PLEDGE_GRACE_S = 0.5
"""How long after deciding a race it collected a worker waits before answering others'
callers: a live worker's pledge follows its call's commit by one round trip."""
READ_RETRIES_S = (0.1, 0.5)
"""The waits before reading a race's callers again after a failure."""


def race_toast(outcome: RaceOutcome, user_id: int, language: str) -> str:
    """What a caller is told when the race ends: their verdict, or why there is none."""
    tr = translator(language)
    result = outcome.result_of(user_id)
    if outcome.ending is RaceEnding.CALLED_OFF:
        return race_called_off_toast(tr)
    if result is None:
        return race_over_toast(tr)
    return verdict_toast(result.verdict, result.behind_ms, tr)


class CallerPledges:
    """The presses this worker answers (pledged), and the answers to dead workers' callers."""

    def __init__(
        self,
        bot: Bot,
        races: RaceService,
        pledges: AnswerPledges,
        *,
        now_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._bot = bot
        self._races = races
        self._pledges = pledges
        self._now_ns = now_ns
        self._holding: set[asyncio.Task[None]] = set()
        self._mine: set[str] = set()
        """The presses pledged here (PostgreSQL's locks are re-entrant: it would pledge again)."""

    def hold(self, query_id: str, received_ns: int | None) -> None:
        """Pledge to answer press ``query_id`` (a caller waiting here), until it expires."""
        self._keep(query_id, received_ns, taken=False)

    def _keep(self, query_id: str, received_ns: int | None, *, taken: bool) -> None:
        received = received_ns if received_ns is not None else self._now_ns()
        self._mine.add(query_id)
        task = asyncio.create_task(self._held(query_id, expires_ns(received), taken))
        self._holding.add(task)
        task.add_done_callback(self._holding.discard)

    async def _held(self, query_id: str, until_ns: int, taken: bool) -> None:
        try:
            if not taken and not await self._pledges.pledge(query_id):
                return  # another worker answered it already (this one was slow to pledge)
            await asyncio.sleep(max(0.0, (until_ns - self._now_ns()) / 1e9))
            await self._pledges.release_pledge(query_id)
        except Exception:
            logger.exception("press %s: could not keep its answer pledged", query_id)
        finally:
            self._mine.discard(query_id)

    async def answer_orphans(
        self,
        race_id: int,
        outcome: RaceOutcome,
        *,
        waited_for: Collection[int],
        own_queries: Collection[str],
        collected: bool,
    ) -> int:
        """Answer the race's callers that nobody else answers; return how many were answered.

        ``waited_for``/``own_queries``: the users and presses answered here; ``collected``:
        calls were taken here while it ran (others may still be pledging theirs).
        """
        if outcome.ending is not RaceEnding.CALLED_OFF:
            seated = outcome.user_ids
            if {seated[r.seat] for r in outcome.results if r.seat < len(seated)} <= set(waited_for):
                return 0  # every caller's press is answered here: nothing to read
        if collected and self._pledges.shared:
            await asyncio.sleep(PLEDGE_GRACE_S)
        callers = await self._callers(race_id)
        answers = []
        for caller in callers:
            press = self._press_of(caller)
            if press is None or press[0] in own_queries or press[0] in self._mine:
                continue
            query_id, language_code = press
            if self._now_ns() >= last_try_ns(caller.stamp_ns):
                # Telegram takes no answer any more; the board shows the race's outcome.
                logger.warning(
                    "race %d: the press of user %d (update %d) is too old to answer",
                    race_id,
                    caller.user_id,
                    caller.update_id,
                )
                continue
            try:
                pledged = await self._pledges.pledge(query_id)
            except Exception:
                logger.exception(
                    "race %d: could not pledge the press of user %d (update %d); unanswered",
                    race_id,
                    caller.user_id,
                    caller.update_id,
                )
                continue
            if not pledged:
                continue  # its worker is alive and answers it
            self._keep(query_id, caller.stamp_ns, taken=True)
            text = race_toast(outcome, caller.user_id, language_of(language_code))
            logger.info(
                "race %d: answering the press of user %d (update %d), whose worker is gone",
                race_id,
                caller.user_id,
                caller.update_id,
            )
            answers.append(answer_toast(self._bot, query_id, text, received_ns=caller.stamp_ns))
        return sum(await asyncio.gather(*answers))

    async def _callers(self, race_id: int) -> list[RaceCaller]:
        for wait in (*READ_RETRIES_S, None):
            try:
                return await self._races.callers(race_id)
            except Exception:
                if wait is None:
                    logger.exception(
                        "race %d: could not read its callers; presses of a dead worker's"
                        " callers stay unanswered",
                        race_id,
                    )
                    return []
                logger.exception(
                    "race %d: could not read its callers; trying again in %.1f s", race_id, wait
                )
                await asyncio.sleep(wait)
        return []

    def _press_of(self, caller: RaceCaller) -> tuple[str, str | None] | None:
        """The press's query id and its user's language code (None: a call by command)."""
        try:
            query = Update.de_json(caller.update, self._bot).callback_query
        except Exception:
            logger.exception("update %d of a race cannot be read", caller.update_id)
            return None
        if query is None:
            return None
        return query.id, query.from_user.language_code

    async def close(self) -> None:
        """Stop holding pledges (closing the connection drops them on PostgreSQL)."""
        tasks = list(self._holding)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
