"""A live board: the last lines it keeps, and a message that can no longer be edited."""

from __future__ import annotations

import gettext
from typing import Any, cast

from telegram import Bot
from telegram.error import BadRequest

from telesnap.bot.delivery.live import (
    LIVE_EVENTS,
    RecentLines,
    edit_in_place,
    kept_earlier,
)
from telesnap.game import Card, CardFlipped, SeatStatus
from telesnap.services.outbox.rows import BoardEntry
from telesnap.services.views import PlayerView, PlayOutcome, TableView


def test_a_live_board_shows_earlier_lines_above_its_own_up_to_the_limit() -> None:
    first = [f"flip {index}" for index in range(LIVE_EVENTS - 2)]
    assert kept_earlier([], first) == []
    second = ["flip a", "flip b", "flip c"]
    kept = kept_earlier(first, second)
    assert kept == first[-(LIVE_EVENTS - 3) :], "topped up with earlier lines"
    many = [f"event {index}" for index in range(LIVE_EVENTS + 4)]
    assert kept_earlier(first, many) == [], "every new event, however many"


def flipped(entry_id: int, card: str) -> BoardEntry:
    ann = PlayerView(0, 10, "Ann", Card.parse(card), 20, 1, SeatStatus.ACTIVE, is_turn=False)
    table = TableView(entry_id, entry_id, (ann,), None, 0, entry_id, False, None, None)
    flip = CardFlipped(seat=0, card=Card.parse(card), turned_over=False)
    return BoardEntry(entry_id, -1, 0, 1, PlayOutcome(table, (flip,)))


async def test_lines_kept_for_the_board_shown_are_used_and_others_read_back() -> None:
    reads: list[int] = []

    async def shown_boards(game_id: int, count: int) -> list[BoardEntry]:
        reads.append(game_id)
        return [flipped(1, "7♣"), flipped(2, "K♦")][-count:]

    recent = RecentLines(shown_boards)
    tr = gettext.NullTranslations()
    assert await recent.earlier(1, None, tr) == [], "nothing is shown before the first board"
    assert await recent.earlier(1, 2, tr) == ["<b>Ann</b> flips 7♣", "<b>Ann</b> flips K♦"]
    recent.shown(1, ["line a", "line b"], version=3, is_over=False)
    assert await recent.earlier(1, 3, tr) == ["line a", "line b"]
    assert reads == [1], "the lines kept for the board on screen need no read"
    assert len(await recent.earlier(1, 4, tr)) == 2, "another board is on screen: read back"
    recent.shown(1, ["the end"], version=5, is_over=True)
    assert await recent.earlier(1, 5, tr) != ["the end"], "an ended game is forgotten"


async def test_the_games_shown_least_lately_are_read_back() -> None:
    recent = RecentLines(games_kept=2)
    for game in (1, 2, 3):
        recent.shown(game, [f"line of {game}"], version=1, is_over=False)
    tr = gettext.NullTranslations()
    assert await recent.earlier(1, 1, tr) == []
    assert await recent.earlier(3, 1, tr) == ["line of 3"]


async def test_a_failed_read_leaves_the_earlier_lines_out() -> None:
    async def broken(game_id: int, count: int) -> list[BoardEntry]:
        raise ConnectionError("database unavailable")

    assert await RecentLines(broken).earlier(1, 2, gettext.NullTranslations()) == []


class EditingBot:
    def __init__(self, error: str | None) -> None:
        self.error = error

    async def edit_message_text(self, text: str, **kwargs: Any) -> Any:
        if self.error is not None:
            raise BadRequest(self.error)
        return True


async def test_an_edit_is_shown_in_the_same_message() -> None:
    assert await edit_in_place(cast(Bot, EditingBot(None)), -1, 7, "table", None) == 7
    unchanged = EditingBot("Message is not modified: specified new message content")
    assert await edit_in_place(cast(Bot, unchanged), -1, 7, "table", None) == 7


async def test_a_message_that_can_no_longer_be_edited_asks_for_a_new_one() -> None:
    gone = EditingBot("Message to edit not found")
    assert await edit_in_place(cast(Bot, gone), -1, 7, "table", None) is None
