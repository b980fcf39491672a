"""A live board: the last lines it keeps, and a message that can no longer be edited."""

from __future__ import annotations

from typing import Any, cast

from telegram import Bot
from telegram.error import BadRequest

from telesnap.bot.delivery.live_board import LIVE_EVENTS, RecentLines, edit_in_place


def test_a_live_board_shows_earlier_lines_above_its_own_up_to_the_limit() -> None:
    recent = RecentLines()
    first = [f"flip {index}" for index in range(LIVE_EVENTS - 2)]
    assert recent.with_earlier(1, first) == first
    recent.shown(1, first, is_over=False)
    second = ["flip a", "flip b", "flip c"]
    shown = recent.with_earlier(1, second)
    assert shown == [*first[-(LIVE_EVENTS - 3) :], *second], "topped up with earlier lines"
    many = [f"event {index}" for index in range(LIVE_EVENTS + 4)]
    assert recent.with_earlier(1, many) == many, "every new event, however many"
    assert recent.with_earlier(2, second) == second, "each game its own"
    recent.shown(1, second, is_over=True)
    assert recent.with_earlier(1, second) == second, "an ended game is forgotten"


def test_the_games_shown_least_lately_are_forgotten() -> None:
    recent = RecentLines(games_kept=2)
    for game in (1, 2, 3):
        recent.shown(game, [f"line of {game}"], is_over=False)
    assert recent.with_earlier(1, []) == []
    assert recent.with_earlier(3, []) == ["line of 3"]


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
