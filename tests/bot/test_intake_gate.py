"""The intake gate: a member's flood is turned away before it is stored, players are not."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Coroutine
from typing import Any

from telegram import CallbackQuery, Chat, Message, Update, User

from telesnap.bot.ingress.gate import MET_IN_PLAY, Budget, GateLimits, IntakeGate, Verdict
from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.render.callbacks import Action
from telesnap.services.types import Reason, Topic

from .inbox_helpers import SIGNER

CHAT = Chat(-100, Chat.SUPERGROUP)
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def command(user_id: int, text: str = "/help", chat: Chat = CHAT) -> Update:
    user = User(user_id, f"user {user_id}", is_bot=False)
    return Update(user_id, message=Message(1, NOW, chat, from_user=user, text=text))


def press(user_id: int, chat: Chat = CHAT) -> Update:
    user = User(user_id, f"user {user_id}", is_bot=False)
    message = Message(1, NOW, chat)
    return Update(user_id, callback_query=CallbackQuery("q", user, "c", message=message, data="x"))


def test_a_flood_of_commands_is_dropped_after_the_users_budget() -> None:
    gate = IntakeGate(GateLimits(commands_per_user=Budget(6, 10.0)))
    verdicts = [gate.verdict(command(1)) for _ in range(150)]
    assert verdicts[:6] == [Verdict.ADMIT] * 6
    assert set(verdicts[6:]) == {Verdict.DROP}
    assert gate.turned_away == 144
    # Another member of the same chat is not held back by the first one's flood.
    assert gate.verdict(command(2)) is Verdict.ADMIT


def test_presses_over_the_budget_are_answered_not_stored() -> None:
    gate = IntakeGate(GateLimits(presses_per_user=Budget(15, 5.0)))
    verdicts = [gate.verdict(press(1)) for _ in range(100)]
    assert verdicts.count(Verdict.ADMIT) == 15
    assert verdicts.count(Verdict.ANSWER) == 85
    assert gate.verdict(press(2)) is Verdict.ADMIT


def test_presses_and_commands_have_budgets_of_their_own() -> None:
    gate = IntakeGate(GateLimits(commands_per_user=Budget(1, 10.0)))
    assert gate.verdict(command(1)) is Verdict.ADMIT
    assert gate.verdict(command(1)) is Verdict.DROP
    assert gate.verdict(press(1)) is Verdict.ADMIT


def test_a_chat_has_a_budget_for_all_its_members() -> None:
    gate = IntakeGate(GateLimits(updates_per_chat=Budget(10, 10.0)))
    verdicts = [gate.verdict(command(user)) for user in range(20)]
    assert verdicts.count(Verdict.ADMIT) == 10
    other = Chat(-200, Chat.SUPERGROUP)
    assert gate.verdict(command(1, chat=other)) is Verdict.ADMIT


def test_a_topic_holds_a_bounded_number_of_calls_on_their_way() -> None:
    in_flight = {Topic(-100, 0): (25, 2)}  # 24 on their way, one of them this caller's, and this
    gate = IntakeGate(calls_in_flight=lambda topic, user_id: in_flight.get(topic, (0, 0)))
    assert gate.verdict(press(1), Topic(-100, 0), is_call=True) is Verdict.ANSWER
    assert gate.verdict(press(1), Topic(-100, 0), is_call=False) is Verdict.ADMIT
    assert gate.verdict(press(2), Topic(-100, 7), is_call=True) is Verdict.ADMIT


def test_a_crowd_pressing_snap_cannot_keep_a_players_one_call_out() -> None:
    """Non-players' calls fill the topic: each caller's first call still gets in, so the player
    who presses Snap! once is heard; a caller's further calls meet the bound."""
    book = ReceiptBook(SIGNER)
    gate = IntakeGate(calls_in_flight=book.calls_on_their_way)
    update_ids = iter(range(1, 1000))

    def snap(user_id: int) -> Verdict:
        user = User(user_id, f"user {user_id}", is_bot=False)
        data = SIGNER.encode(Action.SNAP, game_id=3, version=5)
        query = CallbackQuery("q", user, "c", message=Message(1, NOW, CHAT), data=data)
        (arrival,) = book.stamp([Update(next(update_ids), callback_query=query)])
        return gate.verdict(arrival.update, arrival.topic, arrival.is_call)

    crowd = [snap(user_id) for _ in range(10) for user_id in (11, 12, 13)]
    assert crowd.count(Verdict.ADMIT) < len(crowd), "the crowd's calls are bounded"
    assert snap(2) is Verdict.ADMIT, "the player's call is heard"
    assert snap(2) is Verdict.ANSWER, "their second call on its way meets the bound"


def test_a_users_refusals_get_a_few_replies_per_window() -> None:
    gate = IntakeGate(GateLimits(replies_per_user=Budget(2, 10.0)))
    assert [gate.may_reply(-100, 1) for _ in range(4)] == [True, True, False, False]
    assert gate.may_reply(-100, 2)
    assert gate.may_reply(-200, 1)


def test_a_crowd_each_within_their_share_gets_the_chats_share_of_replies() -> None:
    gate = IntakeGate(
        GateLimits(replies_per_user=Budget(5, 10.0), replies_per_chat=Budget(4, 60.0))
    )
    answered = [gate.may_reply(-100, user) for user in range(1, 11)]
    assert answered == [True] * 4 + [False] * 6
    assert gate.may_reply(-200, 5), "another chat has its own share"
    assert gate.may_reply(5, 5), "and so has a private chat"


def test_updates_without_a_sender_are_always_let_in() -> None:
    gate = IntakeGate(GateLimits(updates_per_chat=Budget(1, 10.0)))
    for _ in range(3):
        assert gate.verdict(Update(9)) is Verdict.ADMIT


def test_a_user_whose_updates_keep_being_refused_is_turned_away_whole() -> None:
    gate = IntakeGate(GateLimits(refusals_per_user=Budget(3, 10.0)))
    for _ in range(3):
        assert gate.verdict(press(1)) is Verdict.ADMIT
        gate.refused(CHAT.id, 1)  # not in the game, say
    assert gate.verdict(press(1)) is Verdict.COOL_DOWN, "told why, not 'too many presses'"
    assert gate.verdict(command(1)) is Verdict.DROP
    # The others in the chat are heard as before.
    assert gate.verdict(press(2)) is Verdict.ADMIT


def test_what_a_player_meets_in_play_never_turns_them_away() -> None:
    # Flip pressed before one's turn, Snap! while the race is decided, a board an edit
    # replaced: a keen player meets these all game long, and must be heard when it counts.
    gate = IntakeGate(GateLimits(refusals_per_user=Budget(3, 10.0)))
    for reason in [*MET_IN_PLAY, *MET_IN_PLAY]:
        assert gate.verdict(press(1)) is Verdict.ADMIT
        gate.refused(CHAT.id, 1, reason)
    assert gate.verdict(press(1)) is Verdict.ADMIT
    for _ in range(3):
        gate.refused(CHAT.id, 1, Reason.NOT_PLAYING)  # presses on a game one is not in
    assert gate.verdict(press(1)) is Verdict.COOL_DOWN


def test_a_burst_lets_in_only_what_a_person_would_wait_for() -> None:
    sent: dict[int, int] = {}

    def waiting_from(chat_id: int, user_id: int, update_id: int) -> int:
        sent[user_id] = sent.get(user_id, 0) + 1
        return sent[user_id]  # none of them handled yet

    gate = IntakeGate(waiting_from=waiting_from)
    verdicts = [gate.verdict(command(1)) for _ in range(45)]
    assert verdicts == [Verdict.ADMIT] * 10 + [Verdict.DROP] * 35
    assert gate.verdict(press(1)) is Verdict.ANSWER
    assert gate.verdict(command(2)) is Verdict.ADMIT


def test_checking_budgets_starts_no_thread_beside_the_event_loop() -> None:
    threads = threading.active_count()
    gate = IntakeGate()
    for user in range(50):
        gate.verdict(press(user))
        gate.verdict(command(user))
        gate.may_reply(CHAT.id, user)
    assert threading.active_count() == threads


async def test_a_press_answered_already_is_not_answered_again_at_the_gate() -> None:
    """A batch whose store failed comes back: its presses meet the gate again, and Telegram
    refuses a second answer to a press (the bot would log a refusal for each)."""
    from telesnap.bot.render.texts import too_many_presses
    from telesnap.bot.render.toasts import AnsweredPresses, press_toast

    class Answering:
        def __init__(self) -> None:
            self.answered_presses = AnsweredPresses()
            self.answers: list[str] = []

        async def answer_callback_query(self, query_id: str, text: str | None = None) -> bool:
            self.answers.append(query_id)
            self.answered_presses.add(query_id)
            return True

    bot = Answering()
    spawned: list[Coroutine[Any, Any, Any]] = []
    answer = press_toast(bot, spawned.append)  # type: ignore[arg-type]
    for _ in range(2):
        answer(press(1), too_many_presses)
        for coroutine in spawned:
            await coroutine
        spawned.clear()
    assert bot.answers == ["q"]


def test_a_message_from_a_bot_account_is_dropped_but_one_sent_as_the_group_is_let_in() -> None:
    """No bot plays (Telegram shows a bot no other bot's messages); an anonymous admin's
    message comes from Telegram's stand-in bot with the group as its sender, and is answered."""
    gate = IntakeGate()
    robot = User(5555, "OtherBot", is_bot=True)
    forged = Update(1, message=Message(1, NOW, CHAT, from_user=robot, text="/newgame"))
    assert gate.verdict(forged) is Verdict.DROP
    stand_in = User(1087968824, "Group", is_bot=True)
    anonymous = Message(2, NOW, CHAT, from_user=stand_in, sender_chat=CHAT, text="/newgame")
    assert gate.verdict(Update(2, message=anonymous)) is Verdict.ADMIT


async def test_a_press_turned_away_is_told_why() -> None:
    """Its sender's refusals, not "too many presses": she may have pressed only once."""
    from telesnap.bot.ingress.intake import Intake
    from telesnap.bot.render.texts import chat_too_busy, cool_down, too_many_presses
    from telesnap.bot.render.toasts import TextOf

    limits = GateLimits(
        refusals_per_user=Budget(1, 10.0),
        presses_per_user=Budget(1, 5),
        updates_per_chat=Budget(3, 10.0),
    )
    gate = IntakeGate(limits)
    told: list[tuple[int, TextOf]] = []
    intake = Intake(
        ReceiptBook(SIGNER),
        None,  # type: ignore[arg-type]  # nothing is stored: every press is turned away
        None,  # type: ignore[arg-type]
        gate,
        lambda update, text_of: told.append((update.effective_user.id, text_of)),  # type: ignore[union-attr]
    )
    assert gate.verdict(press(1)) is Verdict.ADMIT  # each spends the one press of its budget
    assert gate.verdict(press(2)) is Verdict.ADMIT
    assert gate.verdict(command(3)) is Verdict.ADMIT  # and the chat's budget is spent
    gate.refused(CHAT.id, 2)  # a press on a game she is not in, say
    await intake.receive([press(1), press(2), press(4)], [{}, {}, {}])
    assert told == [(1, too_many_presses), (2, cool_down), (4, chat_too_busy)]


def test_a_crowd_flooding_the_chat_cannot_keep_its_players_from_playing() -> None:
    """Past the chat's budget a crowd is turned away "busy"; a seated player's press gets in."""
    seated = {(7, Topic(-100, 0), 1)}
    gate = IntakeGate(
        GateLimits(updates_per_chat=Budget(10, 10.0)),
        plays_in=lambda game_id, topic, user_id: (game_id, topic, user_id) in seated,
    )
    crowd = [gate.verdict(command(user)) for user in range(100, 130)]
    assert crowd.count(Verdict.ADMIT) == 10
    assert gate.verdict(press(101), Topic(-100, 0), game_id=7) is Verdict.BUSY
    players_press = [gate.verdict(press(1), Topic(-100, 0), game_id=7) for _ in range(5)]
    assert players_press == [Verdict.ADMIT] * 5
    assert gate.verdict(press(1), Topic(-100, 0), game_id=8) is Verdict.BUSY, "another game's"
