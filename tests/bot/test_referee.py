"""The referee on its own: retries a failing decision, and answers every caller once."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from telegram import Chat, Message, Update

from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import JoinedCall, RaceReferee, Waiter
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.game import CallResult, CallVerdict
from telesnap.services.types import Place
from telesnap.services.views import RaceEnding, RaceOutcome

PLACE = Place(chat_id=-42, thread_id=0)
SIGNER = CallbackSigner.for_token("123:secret")
CALL = JoinedCall(race_id=5, game_id=99, deadline_ns=0, board_version=3)
WAITER = Waiter(query_id="q", user_id=7, language="en")


class AnsweringBot:
    """Records the toasts the referee sends."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, str]] = []
        self.answered = asyncio.Event()

    async def answer_callback_query(self, query_id: str, text: str) -> bool:
        self.answers.append((query_id, text))
        self.answered.set()
        return True


class FlakyRaces:
    """A race service whose decisions fail until ``recover`` is set."""

    def __init__(self) -> None:
        self.recover = asyncio.Event()
        self.attempts = 0
        self.failed = asyncio.Event()

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        self.attempts += 1
        if not self.recover.is_set():
            self.failed.set()
            raise OSError("the database is unavailable")
        return RaceOutcome(RaceEnding.DECIDED_ELSEWHERE, (CallResult(0, CallVerdict.WON),), (7,))


def referee_with(races: Any, bot: AnsweringBot, **kwargs: Any) -> RaceReferee:
    return RaceReferee(bot, races, ReceiptBook(SIGNER), **kwargs)  # type: ignore[arg-type]


async def test_a_failing_decision_is_retried_and_logged_with_its_chat_and_game(
    caplog: pytest.LogCaptureFixture,
) -> None:
    races, bot = FlakyRaces(), AnsweringBot()
    referee = referee_with(races, bot)
    referee.call_joined(
        PLACE, JoinedCall(5, 99, deadline_ns=0, board_version=3), Waiter("q", 7, "en")
    )
    with caplog.at_level(logging.ERROR, logger="telesnap.bot.referee.races"):
        await races.failed.wait()
        races.recover.set()
        await referee.wait_until_decided(PLACE)
        await bot.answered.wait()
    assert races.attempts >= 2
    assert bot.answers == [("q", "⚡ You won the race!")]
    failure = caplog.records[0].getMessage()
    assert "race 5 of game 99 in chat -42" in failure
    await referee.close()


async def test_callers_are_told_of_a_delay_while_the_press_can_still_be_answered() -> None:
    races, bot = FlakyRaces(), AnsweringBot()
    referee = referee_with(races, bot, answer_within_s=0.0)
    referee.call_joined(
        PLACE, JoinedCall(5, 99, deadline_ns=0, board_version=3), Waiter("q", 7, "en")
    )
    await races.failed.wait()
    await bot.answered.wait()
    races.recover.set()
    await referee.wait_until_decided(PLACE)
    assert bot.answers == [
        ("q", "The race is taking longer to decide: the result will be shown in the chat.")
    ], "answered once: a press takes one answer"
    await referee.close()


class HangingRaces:
    """A race service whose first decision fails and whose second hangs until released."""

    def __init__(self) -> None:
        self.failed = False
        self.hang = asyncio.Event()

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        if not self.failed:
            self.failed = True  # the next attempt waits for the test
            raise OSError("the database is unavailable")
        await self.hang.wait()
        return RaceOutcome(RaceEnding.DECIDED_ELSEWHERE, (CallResult(0, CallVerdict.WON),), (7,))


async def test_callers_are_told_of_a_delay_on_time_while_the_next_attempt_still_runs() -> None:
    """The README: told 5 s after the first failure, not at the next failure after that."""
    races, bot = HangingRaces(), AnsweringBot()
    referee = referee_with(races, bot, answer_within_s=0.05)
    referee.call_joined(PLACE, CALL, WAITER)
    await asyncio.wait_for(bot.answered.wait(), timeout=5)  # a guard: the attempt still hangs
    assert bot.answers == [
        ("q", "The race is taking longer to decide: the result will be shown in the chat.")
    ]
    races.hang.set()
    await referee.wait_until_decided(PLACE)
    assert len(bot.answers) == 1, "a press takes one answer"
    await referee.close()


class DecidingRaces:
    """A race service that decides every race it is asked about."""

    def __init__(self) -> None:
        self.decided: list[int] = []

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        self.decided.append(race_id)
        return RaceOutcome(RaceEnding.DECIDED_ELSEWHERE, (CallResult(0, CallVerdict.WON),), (7,))


async def test_a_stop_decides_the_race_in_hand_instead_of_leaving_it_open() -> None:
    races, bot = DecidingRaces(), AnsweringBot()
    referee = referee_with(races, bot)
    window_closes = time.time_ns() + 100_000_000  # a call made a moment before SIGTERM
    referee.call_joined(
        PLACE, JoinedCall(5, 99, deadline_ns=window_closes, board_version=3), Waiter("q", 7, "en")
    )
    await referee.close()
    assert races.decided == [5], "no other worker would decide it before the next Flip"
    assert bot.answers == [("q", "⚡ You won the race!")]


def snap_command(update_id: int) -> Update:
    chat = Chat(PLACE.chat_id, "group")
    message = Message(1, None, chat, text="/snap")  # type: ignore[arg-type]
    return Update(update_id, message=message)


async def test_waiting_for_calls_has_no_time_limit_but_ends_when_the_bot_stops() -> None:
    book = ReceiptBook(SIGNER)
    book.stamp([snap_command(1)])
    waiting = asyncio.create_task(book.wait_for_calls((PLACE.chat_id, 0), deadline_ns=2**62))
    await asyncio.sleep(0)
    assert not waiting.done(), "a call stamped inside the window is waited for"
    book.release_all()
    await asyncio.wait_for(waiting, timeout=5)


async def test_waiting_for_calls_ends_when_the_last_call_is_handled() -> None:
    book = ReceiptBook(SIGNER)
    calls = [snap_command(1), snap_command(2)]
    book.stamp(calls)
    waiting = asyncio.create_task(book.wait_for_calls((PLACE.chat_id, 0), deadline_ns=2**62))
    book.finished(calls[0])
    await asyncio.sleep(0)
    assert not waiting.done()
    book.finished(calls[1])
    await asyncio.wait_for(waiting, timeout=5)


class HoldingBot(AnsweringBot):
    """Holds the answer to press "first" until press "second" has been answered."""

    def __init__(self) -> None:
        super().__init__()
        self.both_answered = asyncio.Event()

    async def answer_callback_query(self, query_id: str, text: str) -> bool:
        if query_id == "first":
            await self.answered.wait()
        answered = await super().answer_callback_query(query_id, text)
        if len(self.answers) == 2:
            self.both_answered.set()
        return answered


class TwoCallerRaces:
    """A race service that decides a race of two callers: user 7 wins, user 8 is too slow."""

    async def decide(self, place: Place, race_id: int) -> RaceOutcome:
        results = (CallResult(0, CallVerdict.WON), CallResult(1, CallVerdict.TOO_SLOW, 12))
        return RaceOutcome(RaceEnding.DECIDED_ELSEWHERE, results, (7, 8))


async def test_no_caller_waits_for_another_callers_answer() -> None:
    bot = HoldingBot()
    referee = referee_with(TwoCallerRaces(), bot)
    referee.call_joined(PLACE, CALL, Waiter("first", 7, "en"))
    referee.call_joined(PLACE, CALL, Waiter("second", 8, "en"))
    await referee.wait_until_decided(PLACE)
    async with asyncio.timeout(5):  # a failure guard: one at a time would never get here
        await bot.both_answered.wait()
    assert [query for query, _ in bot.answers] == ["second", "first"]
    await referee.close()
