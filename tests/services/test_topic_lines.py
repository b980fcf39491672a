"""Each topic of a forum is a line of its own: a notice in one never holds another's boards."""

from __future__ import annotations

from typing import Any, cast

from telesnap.services.outbox.rows import (
    Entry,
    Notice,
    NoticeEntry,
    NoticeKind,
    OutboxEntry,
    boards_in_line,
    line_head,
    topic_line,
)
from telesnap.services.views import PlayOutcome

CHAT = -100
NO_BOARD = cast(PlayOutcome, None)  # the lines read ids, topics and games only


def board(row_id: int, thread_id: int, game_id: int) -> OutboxEntry:
    return OutboxEntry(row_id, CHAT, thread_id, game_id, NO_BOARD)


def reminder(row_id: int, thread_id: int, game_id: int) -> NoticeEntry:
    notice = Notice(next(iter(NoticeKind)), cast(dict[str, Any], {}))
    return NoticeEntry(row_id, CHAT, thread_id, game_id, notice, None)


def ids(entries: list[Any]) -> list[int]:
    return [entry.id for entry in entries]


def test_a_notice_in_one_topic_holds_back_only_that_topics_boards() -> None:
    line: list[Entry] = [
        board(1, 10, 1),
        reminder(2, 10, 1),  # topic 10's reminder: its next board waits for it
        board(3, 20, 2),
        board(4, 10, 1),
        board(5, 30, 3),
        board(6, 20, 2),
    ]
    assert ids(boards_in_line(line, 1)) == [1]
    assert ids(boards_in_line(line, 2)) == [3, 6]
    assert ids(boards_in_line(line, 3)) == [5]


def test_each_topics_line_has_its_own_head() -> None:
    line: list[Entry] = [reminder(1, 10, 1), reminder(2, 20, 2), board(3, 20, 2)]
    assert ids(line_head(topic_line(line, 10))) == [1]
    assert ids(line_head(topic_line(line, 20))) == [2]
    assert ids(topic_line(line, 30)) == []
