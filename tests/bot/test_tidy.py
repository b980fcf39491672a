"""Tidying a game's boards: the one before the newest loses its buttons right behind it."""

from __future__ import annotations

from typing import Any, cast

from telesnap.bot.delivery.courier import Courier
from telesnap.bot.delivery.lanes import Outbox
from telesnap.bot.delivery.direct import KeyboardRemovalPost
from telesnap.bot.delivery.tidy import BoardTidier

CHAT, GAME = -700, 5


class NextOutbox:
    """Records the posts queued next in line."""

    def __init__(self) -> None:
        self.removed: list[int] = []

    def submit_next(self, chat_id: int, post: Any) -> Any:
        assert isinstance(post, KeyboardRemovalPost)
        assert chat_id == CHAT
        self.removed.append(post.message_id)
        return _Done()


class _Done:
    def add_done_callback(self, callback: Any) -> None:
        pass


def tidier() -> tuple[NextOutbox, BoardTidier]:
    outbox = NextOutbox()
    return outbox, BoardTidier(Courier(cast(Outbox, outbox)))


def test_each_new_board_takes_the_buttons_off_the_one_before() -> None:
    outbox, boards = tidier()
    boards.board_shown(CHAT, GAME, 1, 1, is_over=False)
    assert outbox.removed == [], "the first board is the only one"
    for message_id in (2, 3, 4):
        boards.board_shown(CHAT, GAME, message_id, message_id, is_over=False)
    assert outbox.removed == [1, 2, 3], "one removal per board, at once, however fast they come"


def test_the_end_of_a_game_takes_the_last_buttons_off_at_once() -> None:
    outbox, boards = tidier()
    for message_id in (1, 2, 3):
        boards.board_shown(CHAT, GAME, message_id, message_id, is_over=False)
    boards.board_shown(CHAT, GAME, 4, 4, is_over=True)
    assert outbox.removed == [1, 2, 3]
    assert boards.game_count == 0


def test_a_live_board_edited_in_place_loses_nothing() -> None:
    outbox, boards = tidier()
    for _ in range(3):
        boards.board_shown(CHAT, GAME, 9, 9, is_over=False)
    boards.board_shown(CHAT, GAME, 9, 9, is_over=True)
    assert outbox.removed == []


def test_nothing_is_tidied_in_a_chat_that_removed_the_bot() -> None:
    outbox = NextOutbox()
    courier = Courier(cast(Outbox, outbox))
    boards = BoardTidier(courier)
    boards.board_shown(CHAT, GAME, 1, 1, is_over=False)
    courier.close_chat(CHAT)
    boards.board_shown(CHAT, GAME, 2, 2, is_over=True)
    assert outbox.removed == [], "no edit is sent where the bot was removed"


def test_the_board_before_loses_its_buttons_when_another_process_showed_it() -> None:
    outbox, boards = tidier()  # a worker that did not show board 7 (another did, or a restart)
    boards.board_shown(CHAT, GAME, 8, 8, is_over=False, previous=(7, 7))
    boards.board_shown(CHAT, GAME, 9, 9, is_over=False, previous=(8, 8))
    assert outbox.removed == [7, 8], "each stored predecessor once"


def test_a_board_read_before_the_last_one_was_marked_removes_nothing_twice() -> None:
    # Board 3's rows were read while board 2 was still being sent: the newest shown
    # then, as stored, was board 1, whose buttons board 2 already took off. Telegram
    # answers a second removal "message is not modified" (a 400).
    outbox, boards = tidier()
    boards.board_shown(CHAT, GAME, 1, 1, is_over=False)
    boards.board_shown(CHAT, GAME, 2, 2, is_over=False, previous=(1, 1))
    boards.board_shown(CHAT, GAME, 3, 3, is_over=False, previous=(1, 1))
    boards.board_shown(CHAT, GAME, 4, 4, is_over=True, previous=(2, 2))
    assert outbox.removed == [1, 2, 3]


def test_a_board_the_other_worker_bared_is_not_bared_again() -> None:
    # Workers a and b take turns sending the chat: b showed board 2 after a's board 1,
    # and took 1's buttons off. When a shows board 3, the board before is b's 2.
    a_outbox, a = tidier()
    b_outbox, b = tidier()
    a.board_shown(CHAT, GAME, 1, 1, is_over=False)
    b.board_shown(CHAT, GAME, 2, 2, is_over=False, previous=(1, 1))
    a.board_shown(CHAT, GAME, 3, 3, is_over=False, previous=(2, 2))
    assert b_outbox.removed == [1]
    assert a_outbox.removed == [2], "a's own board 1 is older than the stored 2: b bared it"


def test_a_board_showing_the_same_version_again_loses_its_buttons_too() -> None:
    # A wrong call shows board version 1 again as message 5; the store keeps message 4
    # as version 1's, so the next board names 4 as the one before.
    outbox, boards = tidier()
    boards.board_shown(CHAT, GAME, 4, 1, is_over=False, previous=(3, 0))
    boards.board_shown(CHAT, GAME, 5, 1, is_over=False, previous=(4, 1))
    boards.board_shown(CHAT, GAME, 6, 2, is_over=True, previous=(4, 1))
    assert outbox.removed == [3, 4, 5]
