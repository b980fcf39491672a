"""Robots read the newest board as a person would and press through the emulator."""

from __future__ import annotations

import random

import pytest

from telesnap.bot.render.callbacks import Action, CallbackSigner
from telesnap.emulator.core import Emulator
from telesnap.emulator.records import TranscriptMessage
from telesnap.sandbox.robots import Robots, RobotStyle, read_board

FAST = RobotStyle(reaction_ms=20, jitter_ms=0, wrong_rate=0)


def board_text(robo_top: str, ann_top: str, turn: str) -> str:
    marks = {name: "▶ " if name == turn else "" for name in ("Ann", "Robo")}
    return (
        "Ann flips something\n\n"
        f"{marks['Ann']}Ann: {ann_top} · 5 face-down · 1 face-up\n"
        f"{marks['Robo']}Robo: {robo_top} · 5 face-down · 1 face-up\n"
        f"Turn: {turn}"
    )


class Table:
    def __init__(self, style: RobotStyle = FAST, seed: int = 1) -> None:
        self.emulator = Emulator()
        world = self.emulator.world
        self.ann = world.add_user("Ann")
        self.robo = world.add_user("Robo")
        self.chat = world.add_chat("group", title="Snap", member_ids=[self.ann.id, self.robo.id])
        self.signer = CallbackSigner.for_token(self.emulator.config.token)
        self.robots = Robots(self.emulator, self.signer, random.Random(seed))
        self.robots.add(self.robo.id, style)

    def post(self, text: str, actions: list[Action]) -> TranscriptMessage:
        message = self.emulator.world.add_message(self.chat, self.emulator.bot)
        message.text = text
        row = [
            {"text": a.name, "callback_data": self.signer.encode(a, game_id=1, version=3)}
            for a in actions
        ]
        message.reply_markup = {"inline_keyboard": [row]}
        return message

    async def pressed(self) -> list[Action]:
        """What the robot pressed, once its reaction times have passed."""
        self.robots.look()
        emulator = self.emulator
        assert await emulator.changes.wait_until(lambda: not emulator.scheduled, 10.0)
        actions = []
        for query in emulator.callback_queries.values():
            assert query.user_id == self.robo.id
            press = self.signer.decode(query.data)
            assert press is not None
            actions.append(press.action)
        await emulator.close()
        return actions


BOARD = [Action.FLIP, Action.SNAP]


async def test_a_robot_calls_snap_on_a_match() -> None:
    table = Table()
    table.post(board_text("7♦", "7♣", turn="Ann"), BOARD)
    assert await table.pressed() == [Action.SNAP]


async def test_a_robot_calls_snap_pot_when_a_card_matches_the_pot() -> None:
    table = Table()
    text = board_text("9♦", "7♣", turn="Ann") + "\nSnap Pot: 9♠ (4 cards)"
    table.post(text.replace("\nTurn: Ann", "") + "\nTurn: Ann", [*BOARD, Action.SNAP_POT])
    assert await table.pressed() == [Action.SNAP_POT]


async def test_a_robot_flips_on_its_turn_and_not_on_anothers() -> None:
    table = Table()
    table.post(board_text("3♦", "7♣", turn="Robo"), BOARD)
    assert await table.pressed() == [Action.FLIP]
    other = Table()
    other.post(board_text("3♦", "7♣", turn="Ann"), BOARD)
    assert await other.pressed() == []


async def test_a_robot_that_always_errs_calls_snap_without_a_match() -> None:
    table = Table(RobotStyle(reaction_ms=20, jitter_ms=0, wrong_rate=1))
    table.post(board_text("3♦", "7♣", turn="Ann"), BOARD)
    assert await table.pressed() == [Action.SNAP]


async def test_a_robot_joins_an_open_lobby_once() -> None:
    table = Table()
    lobby = table.post("A game is starting\n• Ann", [Action.JOIN, Action.LEAVE, Action.START])
    assert await table.pressed() == [Action.JOIN]
    again = Table()
    again.post("A game is starting\n• Ann\n• Robo", [Action.JOIN, Action.LEAVE, Action.START])
    assert await again.pressed() == []
    assert lobby.message_id == 1


async def test_a_robot_acts_on_each_board_only_once() -> None:
    table = Table()
    table.post(board_text("7♦", "7♣", turn="Ann"), BOARD)
    table.robots.look()
    assert await table.pressed() == [Action.SNAP]


def test_a_board_is_read_in_a_right_to_left_language_too() -> None:
    rtl = "\u200f◀ \u2068Robo\u2069: \u20667♦\u2069 · 5 · 1\n\u200fAnn: — · 5 · 1"
    reading = read_board(rtl)
    assert reading.tops == {"Robo": "7", "Ann": None}
    assert reading.turn == "Robo"


@pytest.mark.parametrize("style", [{"reaction_ms": 10}, {"jitter_ms": 300}, {"wrong_rate": -0.1}])
def test_an_impossible_style_is_refused(style: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        RobotStyle(**style)
