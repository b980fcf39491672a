"""Presses that cannot be stored: while the database is away, a press is answered before
Telegram would give up on it, and counts once it can be stored."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from telesnap.bot.ingress.intake import SLOW_ANSWER_AFTER_S, Intake
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.services.inbox import Intaken

from .inbox_helpers import SIGNER, message_update, snap_press


class AwayInbox:
    """An inbox whose store fails while ``away``."""

    away = True

    async def store(self, stored: list[Any], *_: Any, **__: Any) -> Intaken:
        if self.away:
            raise ConnectionResetError("the database went away")
        return Intaken(frozenset(entry.update_id for entry in stored), {})


class Dispatcher:
    origin = "here"
    shared = False

    def __init__(self) -> None:
        self.offered: list[int] = []

    def offer(self, stored: list[Any], intaken: Intaken) -> None:
        self.offered += [entry.update_id for entry in stored]


async def test_a_press_stored_only_after_an_outage_is_answered_while_it_still_can_be() -> None:
    now = [100.0]
    slow: list[int] = []
    inbox, dispatcher = AwayInbox(), Dispatcher()
    intake = Intake(
        ReceiptBook(SIGNER, "host"),
        inbox,  # type: ignore[arg-type]
        dispatcher,  # type: ignore[arg-type]
        toast=lambda update, text_of: slow.append(update.update_id),
        clock=lambda: now[0],
    )
    press, command = snap_press(5, -1), message_update(6, -1)

    async def fetched_again() -> None:
        with pytest.raises(ConnectionResetError):
            await intake.receive([press, command], [press.to_dict(), command.to_dict()])

    await fetched_again()
    now[0] += SLOW_ANSWER_AFTER_S / 2
    await fetched_again()
    assert slow == [], "a short hiccup: the press gets its own answer once stored"
    now[0] += SLOW_ANSWER_AFTER_S / 2
    await fetched_again()
    await fetched_again()
    assert slow == [5], "the press is told, once; a command has nothing to answer"
    inbox.away = False
    await intake.receive([press, command], [press.to_dict(), command.to_dict()])
    assert dispatcher.offered == [5, 6], "and it counts once it is stored"


async def test_a_store_that_hangs_before_it_fails_is_timed_from_its_start() -> None:
    """A database that does not answer fails only at its timeout: the press has waited since
    the store began, and is told at once."""
    now = [100.0]
    slow: list[int] = []

    class HangsThenFails(AwayInbox):
        async def store(self, stored: list[Any], *_: Any, **__: Any) -> Intaken:
            now[0] += SLOW_ANSWER_AFTER_S + 1  # the connect timeout passing
            raise ConnectionResetError("the database did not answer")

    intake = Intake(
        ReceiptBook(SIGNER, "host"),
        HangsThenFails(),  # type: ignore[arg-type]
        Dispatcher(),  # type: ignore[arg-type]
        toast=lambda update, text_of: slow.append(update.update_id),
        clock=lambda: now[0],
    )
    press = snap_press(7, -1)
    with pytest.raises(ConnectionResetError):
        await intake.receive([press], [press.to_dict()])
    assert slow == [7]


async def test_a_press_fetched_again_after_a_failed_store_keeps_the_stamp_it_entered_with() -> None:
    """The race is decided on the moment a press entered the bot: a Snap! made during an outage
    is stored with its first stamp, not the later one of the fetch that finally stored it."""
    tried_stamps: list[dict[int, int]] = []

    class StoresOnThirdTry(AwayInbox):
        async def store(self, stored: list[Any], *_: Any, **__: Any) -> Intaken:
            tried_stamps.append({entry.update_id: entry.stamp_ns for entry in stored})
            if len(tried_stamps) < 3:
                raise ConnectionResetError("the database went away")
            return Intaken(frozenset(entry.update_id for entry in stored), {})

    intake = Intake(ReceiptBook(SIGNER, "host"), StoresOnThirdTry(), Dispatcher())  # type: ignore[arg-type]
    early, later = snap_press(8, -1), snap_press(9, -1)
    with pytest.raises(ConnectionResetError):
        await intake.receive([early], [early.to_dict()])
    with pytest.raises(ConnectionResetError):
        await intake.receive([early, later], [early.to_dict(), later.to_dict()])
    await intake.receive([early, later], [early.to_dict(), later.to_dict()])
    first, _, stored = tried_stamps
    assert stored[8] == first[8]
    assert stored[8] < stored[9], "the earlier press stays the earlier call"


async def test_a_press_whose_store_hangs_is_answered_before_telegram_gives_up() -> None:
    """A lock held for 20 s: the store neither fails nor ends, and the press is told at 5 s."""
    now = [100.0]
    slow: list[int] = []
    timers: list[tuple[float, Any]] = []
    released = asyncio.Event()

    class Hangs(AwayInbox):
        async def store(self, stored: list[Any], *_: Any, **__: Any) -> Intaken:
            await released.wait()
            return Intaken(frozenset(entry.update_id for entry in stored), {})

    timer_set = asyncio.Event()

    def later(delay: float, callback: Any) -> asyncio.TimerHandle:
        timers.append((delay, callback))
        timer_set.set()
        return asyncio.get_running_loop().call_later(3600, lambda: None)

    dispatcher = Dispatcher()
    intake = Intake(
        ReceiptBook(SIGNER, "host"),
        Hangs(),  # type: ignore[arg-type]
        dispatcher,  # type: ignore[arg-type]
        toast=lambda update, text_of: slow.append(update.update_id),
        clock=lambda: now[0],
        later=later,
    )
    press = snap_press(8, -1)
    receiving = asyncio.ensure_future(intake.receive([press], [press.to_dict()]))
    await timer_set.wait()
    ((delay, tell),) = timers
    assert delay == SLOW_ANSWER_AFTER_S
    now[0] += delay
    tell()  # the store still hangs
    assert slow == [8]
    released.set()
    await receiving
    assert dispatcher.offered == [8], "it counts once stored"
