"""Each chat's sender, through the real outbox: what a change writes goes out, in order, once.

The services write their rows; nothing asks for them to be shown: the commit wakes
the chat's sender. Failures stay with their message, and the chat goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter

from telesnap.bot.delivery import sender
from telesnap.bot.delivery.direct import EditPost, KeyboardRemovalPost, TextPost
from telesnap.bot.delivery.failures import OWN_FAULT_ATTEMPTS
from telesnap.bot.delivery.pace import FloodLimits, Pacer
from telesnap.coordination import LocalCoordination
from telesnap.services.outbox.service import Line
from telesnap.services.types import Place

from ..services.test_play_flow import PLACE
from .sending import FakeBotApi, Sessions, Wired


@pytest.fixture
async def wired(session_factory: Sessions) -> AsyncIterator[Wired]:
    wired = Wired(session_factory, FakeBotApi())
    yield wired
    await wired.close()


async def test_what_a_change_writes_goes_out_without_anyone_asking(wired: Wired) -> None:
    table = await wired.started()
    await wired.settle()
    lobby = wired.bot.calls[0]
    lobby_texts = [call.text for call in wired.bot.calls if call.message_id == lobby.message_id]
    assert "the game has started" in lobby_texts[-1], "one lobby message, as the start left it"
    assert len(wired.bot.boards()) == 1
    await wired.flip(table)
    await wired.settle()
    assert len(wired.bot.boards()) == 2, "the flip's board went out by itself"
    assert {row.state for row in await wired.rows()} == {"sent"}


async def test_boards_committed_while_the_sender_is_busy_go_out_in_one_message(
    wired: Wired,
) -> None:
    table = await wired.started()
    await wired.settle()
    wired.bot.held = asyncio.Event()
    table = await wired.flip(table)
    await wired.bot.waiting.wait()  # the first flip's board is on its way meanwhile
    for _ in range(3):
        table = await wired.flip(table)
    wired.bot.held.set()
    await wired.settle()
    start, first_flip, merged = wired.bot.boards()
    assert " deals " in start.text, "the start board, then the flips"
    assert first_flip.text.count(" flips ") == 1, "the board already on its way"
    assert merged.text.count(" flips ") == 3, "the three flips behind it in one message"
    assert {row.state for row in await wired.rows("board")} == {"sent"}


async def test_answers_waiting_in_a_chat_let_its_next_board_go_before_them(wired: Wired) -> None:
    table = await wired.started()
    await wired.settle()
    wired.bot.held = asyncio.Event()
    for number in range(5):
        wired.senders.post(TextPost(PLACE.chat_id, 0, f"answer {number}"))
    await wired.bot.waiting.wait()  # the first answer is on its way
    await wired.flip(table)
    wired.bot.held.set()
    await wired.settle()
    sent = [call.text for call in wired.bot.calls if call.method == "send_message"]
    after_start = sent[sent.index("answer 0") :]
    assert " flips " in after_start[1], f"the board went second, not behind the answers: {sent}"
    assert [text for text in after_start if text.startswith("answer")] == [
        f"answer {number}" for number in range(5)
    ]


async def test_buttons_of_a_message_deleted_in_the_chat_are_no_error(
    wired: Wired, caplog: pytest.LogCaptureFixture
) -> None:
    gone = BadRequest("Bad Request: message to edit not found")
    wired.bot.errors.append(("edit_message_reply_markup", gone))
    with caplog.at_level(logging.INFO):
        wired.senders.post(KeyboardRemovalPost(PLACE.chat_id, 41))
        await wired.settle()
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert f"chat {PLACE.chat_id}: KeyboardRemovalPost: the message is gone" in caplog.text


async def test_each_new_board_takes_the_buttons_off_the_one_before_next_in_line(
    wired: Wired,
) -> None:
    table = await wired.started()
    await wired.settle()
    for _ in range(2):
        table = await wired.flip(table)
        await wired.settle()
    boards = [call.message_id for call in wired.bot.boards()]
    assert wired.bot.bared() == boards[:-1], "every board but the newest lost its buttons"
    calls = wired.bot.calls
    for before, board in itertools.pairwise(boards):
        at = next(i for i, call in enumerate(calls) if call.message_id == board)
        assert (calls[at + 1].method, calls[at + 1].message_id) == (
            "edit_message_reply_markup",
            before,
        ), "right behind the board that replaced it"


async def test_a_board_refused_for_good_is_set_aside_and_the_next_one_is_sent(
    wired: Wired,
) -> None:
    wired.bot.errors.append(("send_message", BadRequest("Bad Request: can't parse entities")))
    await wired.opened()
    await wired.settle()
    table = await wired.started(opened=True)
    await wired.settle()
    await wired.flip(table)
    await wired.settle()
    rows = await wired.rows()
    assert rows[0].state == "failed", "the lobby refused for good is set aside"
    assert "Can't parse entities" in (rows[0].error or "")
    assert all(row.state == "sent" for row in rows[1:]), "what came after it went out"


async def test_a_429_pauses_the_chat_for_its_retry_after_then_the_message_goes(
    wired: Wired,
) -> None:
    wired.bot.errors.append(("send_message", RetryAfter(timedelta(seconds=7))))
    await wired.started()
    await wired.settle()
    assert 7.0 in wired.sleeps
    assert {row.state for row in await wired.rows()} == {"sent"}, "nothing lost"


async def test_a_network_failure_is_tried_again_until_it_goes(wired: Wired) -> None:
    for _ in range(3):
        wired.bot.errors.append(("send_message", NetworkError("Internal Server Error (500)")))
    await wired.started()
    await wired.settle()
    assert wired.sleeps[:3] == [1.0, 2.0, 4.0], "a growing backoff"
    assert {row.state for row in await wired.rows()} == {"sent"}


async def test_an_error_of_our_own_is_tried_a_few_times_then_set_aside(wired: Wired) -> None:
    for _ in range(OWN_FAULT_ATTEMPTS):
        wired.bot.errors.append(("send_message", ValueError("a bug while building the message")))
    table = await wired.started()
    await wired.settle()
    await wired.flip(table)
    await wired.settle()
    rows = await wired.rows()
    assert rows[0].state == "failed", "the lobby, after its attempts"
    assert rows[-1].state == "sent", "the chat went on"


async def test_a_403_sets_the_chats_rows_aside_and_reports_the_chat_once(wired: Wired) -> None:
    wired.bot.errors.append(("send_message", Forbidden("Forbidden: bot was kicked")))
    await wired.started()
    await wired.settle()
    assert wired.removed == [PLACE.chat_id]
    assert {row.state for row in await wired.rows()} == {"failed"}
    assert wired.senders.is_closed(PLACE.chat_id)
    wired.senders.post(TextPost(PLACE.chat_id, 0, "hello"))
    await wired.settle()
    assert [call.text for call in wired.bot.calls] == [], "nothing more is sent there"


async def test_a_group_that_became_a_supergroup_is_closed_like_a_removed_chat(
    wired: Wired,
) -> None:
    wired.bot.errors.append(("send_message", ChatMigrated(-100123)))
    await wired.started()
    await wired.settle()
    assert wired.removed == [PLACE.chat_id], "its games end"
    assert {row.state for row in await wired.rows()} == {"failed"}
    assert [call for call in wired.bot.calls if call.method == "send_message"] == []
    assert wired.senders.is_closed(PLACE.chat_id), "not tried again and again"


async def test_a_waiting_edit_of_a_message_is_replaced_by_a_newer_one(wired: Wired) -> None:
    other = Place(chat_id=-900)
    wired.bot.errors.append(
        ("send_message", RetryAfter(timedelta(seconds=1)))
    )  # the chat waits a moment
    wired.senders.post(TextPost(other.chat_id, 0, "first"))
    for text in ("menu 1", "menu 2", "menu 3"):
        wired.senders.post(EditPost(other.chat_id, 55, text))
    await wired.settle()
    assert [(call.method, call.text) for call in wired.bot.calls] == [
        ("send_message", "first"),
        ("edit_message_text", "menu 3"),
    ]


async def test_the_oldest_row_goes_first_whatever_its_topic(wired: Wired) -> None:
    forum = [Place(chat_id=-300, thread_id=thread, is_forum=True) for thread in (11, 22)]
    tables = [await wired.started(place) for place in forum]
    await wired.settle()
    await wired.flip(tables[1], forum[1])  # both committed before the sender's next turn
    await wired.flip(tables[0], forum[0])
    await wired.settle()
    threads = [call.thread_id for call in wired.bot.boards()]
    assert threads == [11, 22, 22, 11], "each topic's rows in the order they were written"


async def test_a_table_shown_again_older_than_the_board_on_screen_is_never_posted(
    wired: Wired,
) -> None:
    """After a restart the table read for "I am back" may be older than a board shown since."""
    table = await wired.started()
    await wired.settle()
    await wired.flip(table)
    await wired.settle()
    shown = len(wired.bot.boards())
    await wired.write_again((await wired.rows("board"))[0])  # the first table, after the flip's
    await wired.settle()
    assert len(wired.bot.boards()) == shown, "a board older than the one on screen went out"
    assert (await wired.rows("board"))[-1].state == "sent", "settled, unshown"


async def test_a_line_that_cannot_be_read_is_tried_again_and_nothing_is_lost(
    wired: Wired, caplog: pytest.LogCaptureFixture
) -> None:
    read = wired.outbox.line
    failures = [ConnectionError("database unreachable")]

    async def line(chat_id: int) -> Line:
        if failures:
            raise failures.pop()
        return await read(chat_id)

    wired.outbox.line = line  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR):
        await wired.started()
        await wired.settle()
    assert f"chat {PLACE.chat_id}: taking its unsent rows failed" in caplog.text
    assert wired.sleeps == [1.0], "after a backoff"
    assert {row.state for row in await wired.rows()} == {"sent"}, "then everything went out"


async def test_a_chat_that_removed_the_bot_while_a_send_waited_for_its_slot_gets_nothing(
    session_factory: Sessions,
) -> None:
    now = [0.0]
    sent_before_removal: list[int] = []

    async def wait_and_be_removed(seconds: float) -> None:
        """The pace holds the send; meanwhile the bot's removal from the chat is handled."""
        if wired.senders.close_chat(PLACE.chat_id):
            sent_before_removal.append(len(wired.bot.calls))
        now[0] += seconds
        await asyncio.sleep(0)

    limits = FloodLimits(group_burst=1)
    pacer = Pacer(limits, LocalCoordination(), lambda: now[0], wait_and_be_removed)
    wired = Wired(session_factory, FakeBotApi(), limits=limits, pacer=pacer)
    try:
        await wired.started()
        await wired.settle()
        assert sent_before_removal, "a send waited for its slot"
        assert len(wired.bot.calls) == sent_before_removal[0], "nothing went out after it"
        assert "pending" not in {row.state for row in await wired.rows()}, "its rows set aside"
    finally:
        await wired.close()


async def test_a_game_that_never_pauses_lets_a_waiting_answer_out_after_each_board(
    wired: Wired,
) -> None:
    """Players flip the moment each board's turn comes: the answers still go, between boards."""
    table = await wired.started()
    await wired.settle()
    flips = 4
    removing = wired.bot.edit_message_reply_markup

    async def flip_as_each_board_is_bared(**arguments: Any) -> Any:
        nonlocal flips, table
        bared = await removing(**arguments)
        if flips:
            flips -= 1
            table = await wired.flip(table)  # committed before the sender's next turn
            if flips == 3:  # questions asked in the middle of the game
                for number in range(3):
                    wired.senders.post(TextPost(PLACE.chat_id, 0, f"answer {number}"))
        return bared

    wired.bot.edit_message_reply_markup = flip_as_each_board_is_bared  # type: ignore[method-assign]
    table = await wired.flip(table)
    await wired.settle()
    sent = [call.text for call in wired.bot.calls if call.method == "send_message"]
    flipped = [
        index for index, text in enumerate(sent) if " flips " in text and "deals" not in text
    ]
    answers = [index for index, text in enumerate(sent) if text.startswith("answer")]
    assert len(flipped) == 5, sent
    assert answers[-1] < flipped[-1], f"the answers waited for the game to pause: {sent}"
    gaps = [later - earlier for earlier, later in itertools.pairwise(answers)]
    assert gaps == [2, 2], f"one answer after each board: {sent}"


async def test_an_answer_that_waited_too_long_is_dropped_and_logged(
    wired: Wired, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sender, "ANSWER_STALE_S", -1.0)  # any wait is too long
    with caplog.at_level(logging.INFO, logger=sender.__name__):
        wired.senders.post(TextPost(PLACE.chat_id, 0, "an answer nobody waits for"))
        await wired.settle()
    assert [call.text for call in wired.bot.calls] == []
    assert any("TextPost waited 0 s; dropped" in r.getMessage() for r in caplog.records)


async def test_after_a_long_outage_a_chat_tries_again_within_five_seconds(wired: Wired) -> None:
    """However long the Bot API was away, the chat's next try is never far behind its return:
    players pressing on a frozen table are told it is not their turn."""
    for _ in range(8):
        wired.bot.errors.append(("send_message", NetworkError("Bad Gateway (502)")))
    await wired.started()
    await wired.settle()
    assert wired.sleeps[:8] == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0, 5.0, 5.0]
    assert {row.state for row in await wired.rows()} == {"sent"}


async def test_a_removal_that_fails_takes_its_note_back_until_it_goes(
    wired: Wired, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Noted before the send: a kill while the failed removal waits would leave it on for good."""
    withdrawn: list[tuple[int, int]] = []
    not_bared = wired.outbox.not_bared

    async def spy(chat_id: int, message_id: int) -> None:
        withdrawn.append((chat_id, message_id))
        await not_bared(chat_id, message_id)

    monkeypatch.setattr(wired.outbox, "not_bared", spy)
    table = await wired.started()
    await wired.settle()
    wired.bot.errors.append(("edit_message_reply_markup", NetworkError("connection reset")))
    await wired.flip(table)
    await wired.settle()
    first, _ = [call.message_id for call in wired.bot.boards()]
    assert withdrawn == [(PLACE.chat_id, first)]
    assert wired.bot.bared() == [first], "tried again, it went"
    assert await wired.outbox.boards_a_stop_may_have_left_live() == [], "noted again"
