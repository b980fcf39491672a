"""The "done when" run: faults at every boundary, while another chat plays on unaffected.

One chat's stored history cannot be replayed (so its presses, commands and
timers all fail), a board's send raises an error that is not Telegram's, and
then the database is unavailable for ten seconds on the test's clock. The
other chat keeps playing, its timers keep firing, and every press in every
chat is answered.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from telesnap.bot.ingress.application import StampingBot
from telesnap.emulator.testing import RunningEmulator
from telesnap.services.timers.service import MAX_TIMER_FAILURES, retry_delay

from .harness import (
    DatabaseOutage,
    Table,
    another_chat,
    database_file,
    handed_over_unconfirmed,
    table_with,
)
from .test_failures import PRESS_FAILED, break_history, flip_and_see, sql
from .test_timers import Clock

TURN_TIMER_S = 60


async def set_turn_timer(table: Table, admin: str) -> None:
    await table.command(admin, "settings", f"turn_timer {TURN_TIMER_S}")
    await table.wait_for_text("Saved.")


async def reminders_in(table: Table) -> int:
    return sum("it is your turn" in m.text for m in await table.messages())


def fail_one_send(monkeypatch: pytest.MonkeyPatch, chat_id: int) -> list[int]:
    """Make the next board sent to ``chat_id`` raise an error that is not Telegram's."""
    failed: list[int] = []
    send = StampingBot.send_message_returning_id

    async def failing(bot: StampingBot, target: int, text: str, **kwargs: Any) -> int:
        if target == chat_id and not failed:
            failed.append(target)
            raise RuntimeError("injected: the transport broke")
        return await send(bot, target, text, **kwargs)

    monkeypatch.setattr(StampingBot, "send_message_returning_id", failing)
    return failed


async def test_faults_at_every_boundary_leave_the_other_chat_playing(
    emulator: RunningEmulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    database_url = database_file(tmp_path)
    async with table_with(
        emulator, database_url, ["Ann", "Bob"], admins=["Ann"], clock=clock
    ) as broken:
        healthy = await another_chat(broken, ["Cid", "Dan"], admins=["Cid"])
        await set_turn_timer(broken, "Ann")
        await set_turn_timer(healthy, "Cid")
        broken_board = await broken.open_and_start(["Ann", "Bob"])
        await healthy.open_and_start(["Cid", "Dan"])

        # Fault 1: the broken chat's history cannot be replayed after a restart.
        await broken.stop_bot()
        await break_history(database_url, broken.chat_id)
        healthy.runner = await broken.start_bot()
        await healthy.wait_for_text("I am back")

        # Fault 2: its turn timer raises; the healthy chat's timer after it still fires.
        clock.advance(TURN_TIMER_S)
        await healthy.fire_timers()
        # The reminder goes out through the chat's lane: wait for it, not for a quiet moment.
        await healthy.wait_for_text("it is your turn")
        await healthy.client.wait_until_idle()
        assert await reminders_in(healthy) == 1
        assert await reminders_in(broken) == 0
        assert broken_board.turn is not None
        toast = await broken.press(broken_board.turn, broken_board.message, "Flip")
        assert toast.text == PRESS_FAILED
        await flip_and_see(healthy)

        # Fault 3: a board's send raises a non-Telegram error: logged, and the lane goes on.
        failed = fail_one_send(monkeypatch, healthy.chat_id)
        board = await healthy.latest_board()
        assert board.turn is not None
        with caplog.at_level(logging.ERROR):
            toast = await healthy.press(board.turn, board.message, "Flip")
            assert toast.is_answered
            await healthy.client.wait_until_idle()
        assert failed == [healthy.chat_id]
        assert any(str(healthy.chat_id) in r.getMessage() for r in caplog.records)
        await flip_and_see(healthy)

        # Fault 4: the database is unavailable for 10 s (on the clock, not slept).
        assert broken.runner is not None
        outage = DatabaseOutage(broken.runner.engine, clock)
        outage.for_seconds(10)
        # What arrives meanwhile cannot be stored, so it is not acknowledged: it comes
        # again, and is applied once the database is back.
        board = await healthy.latest_board()
        assert board.turn is not None
        query_id = await healthy.client.press(
            healthy.chat_id,
            board.message.message_id,
            healthy.players[board.turn],
            button_text="Flip",
        )
        await handed_over_unconfirmed(healthy.client, "callback_query")
        # The timer loop meets the outage (it logs it and tries again with backoff). Not
        # through fire_timers: a board whose sent mark the outage refused stays unsent
        # until the database is back, so "every row marked" cannot come first.
        assert healthy.runner is not None
        assert healthy.runner.timer_loop is not None
        with pytest.raises(OperationalError):
            await healthy.runner.timer_loop.run_once()
        clock.advance(10)
        assert not outage.is_down()
        toast = await healthy.client.wait_for_toast(callback_query_id=query_id)
        assert toast.text != PRESS_FAILED
        assert f"{board.turn} flips" in (await healthy.next_board()).message.text
        await flip_and_see(healthy)
        outage.remove()

        # The broken chat's timer is retried with backoff, then set aside; the rest goes on.
        for failures in range(1, MAX_TIMER_FAILURES):
            clock.advance(retry_delay(failures).total_seconds())
            await healthy.fire_timers()
        rows = await sql(
            database_url,
            "SELECT payload FROM timers WHERE chat_id = :c AND kind = 'turn_reminder'",
            c=broken.chat_id,
        )
        (payload,) = (json.loads(str(row[0])) for row in rows)
        assert payload["failures"] == MAX_TIMER_FAILURES
        assert "no_such_operation" in payload["set_aside"]
        clock.advance(TURN_TIMER_S)
        await healthy.fire_timers()
        await healthy.client.wait_until_idle()
        await flip_and_see(healthy)

        toasts = await healthy.client.toasts()
        assert toasts
        assert all(toast.is_answered for toast in toasts), "every press in every chat answered"
