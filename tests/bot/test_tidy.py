"""Tidying a game's old boards: not while it plays fast, at once when it goes quiet or ends."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from telesnap.bot.courier import Courier
from telesnap.bot.outbox import Outbox
from telesnap.bot.posts import KeyboardRemovalPost
from telesnap.bot.tidy import BoardTidier

CHAT, GAME = -700, 5


class SpareOutbox:
    """Records the spare posts it is given; ``spared`` is set at each one."""

    def __init__(self) -> None:
        self.removed: list[int] = []
        self.spared = asyncio.Event()

    def submit_spare(self, chat_id: int, post: Any) -> None:
        assert isinstance(post, KeyboardRemovalPost)
        assert chat_id == CHAT
        self.removed.append(post.message_id)
        self.spared.set()


def tidier(outbox: SpareOutbox, quiet_s: float) -> BoardTidier:
    return BoardTidier(Courier(cast(Outbox, outbox)), quiet_s=quiet_s)


async def test_a_fast_game_keeps_its_buttons_until_it_goes_quiet() -> None:
    outbox = SpareOutbox()
    boards = tidier(outbox, quiet_s=0.01)
    for message_id in (1, 2, 3, 4, 5):
        boards.board_shown(CHAT, GAME, message_id, is_over=False)
    assert outbox.removed == [], "nothing while boards keep coming"
    await outbox.spared.wait()
    assert outbox.removed == [1, 2, 3], "the newest two keep their buttons"


async def test_a_new_board_puts_the_tidy_up_off() -> None:
    outbox = SpareOutbox()
    boards = tidier(outbox, quiet_s=3600)
    for message_id in (1, 2, 3):
        boards.board_shown(CHAT, GAME, message_id, is_over=False)
    boards.quiet_s = 0.01  # the next board comes; then the game goes quiet
    boards.board_shown(CHAT, GAME, 4, is_over=False)
    await outbox.spared.wait()
    assert outbox.removed == [1, 2]


async def test_the_end_of_a_game_takes_every_button_off_at_once() -> None:
    outbox = SpareOutbox()
    boards = tidier(outbox, quiet_s=3600)
    for message_id in (1, 2, 3, 4):
        boards.board_shown(CHAT, GAME, message_id, is_over=False)
    boards.board_shown(CHAT, GAME, 5, is_over=True)
    assert outbox.removed == [1, 2, 3, 4]
    assert boards.game_count == 0


async def test_nothing_is_tidied_in_a_chat_that_removed_the_bot() -> None:
    outbox = SpareOutbox()
    courier = Courier(cast(Outbox, outbox))
    boards = BoardTidier(courier, quiet_s=0.01)
    for message_id in (1, 2, 3):
        boards.board_shown(CHAT, GAME, message_id, is_over=False)
    courier.close_chat(CHAT)
    boards.board_shown(CHAT, GAME, 4, is_over=True)
    assert outbox.removed == [], "no edit is sent where the bot was removed"
