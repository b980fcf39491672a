"""Robot players: simulated people who read the newest board and press its buttons.

A robot is an ordinary emulator user (the bot cannot tell it from a person).
It reads the board as a player does, from the message text: one line per
player with their face-up card, the Snap Pot line, and the turn marker. It
joins an open lobby, calls Snap! when two face-up cards share a rank (Snap
Pot! when one matches the pot), sometimes calls Snap! on a board without a
match (its wrong-call rate), and flips on its turn. Each press is made a
reaction time (its mean ± its jitter) after the message appeared, through the
emulator's scheduled presses, so the user's network delay applies too.
"""

from __future__ import annotations

import logging
import random
import re
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from ..bot.render.callbacks import Action, CallbackSigner
from ..emulator.changes import ChangeSignal
from ..emulator.core import Emulator
from ..emulator.records import TranscriptMessage
from ..emulator.users import Press, schedule_presses
from ..services.types import display_name
from ..support.loops import BackgroundLoop
from ..support.retry import Backoff

logger = logging.getLogger(__name__)

BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
CARD = re.compile(r"(10|[2-9JQKA])[♠♥♦♣]")
TURN_MARKERS = ("▶ ", "◀ ")
LOOKBACK = 40
"""How many of the latest messages a robot reads to find each thread's newest keyboard."""


@dataclass
class RobotStyle:
    """How a robot plays: its reaction time and how often it calls Snap! by mistake."""

    reaction_ms: float = 250.0
    jitter_ms: float = 60.0
    wrong_rate: float = 0.05

    def __post_init__(self) -> None:
        if not 20 <= self.reaction_ms <= 60_000:
            raise ValueError("reaction_ms must be 20-60000")
        if not 0 <= self.jitter_ms <= self.reaction_ms - 10:
            raise ValueError("jitter_ms must be 0 or more and leave at least 10 ms of reaction")
        if not 0 <= self.wrong_rate <= 1:
            raise ValueError("wrong_rate must be 0-1")

    def reaction(self, rng: random.Random) -> float:
        """One reaction time, in seconds."""
        return (
            rng.uniform(self.reaction_ms - self.jitter_ms, self.reaction_ms + self.jitter_ms) / 1000
        )


@dataclass
class BoardReading:
    """What a player reads off a board: face-up ranks by name, the pot's rank, whose turn."""

    tops: dict[str, str | None] = field(default_factory=dict)
    pot: str | None = None
    turn: str | None = None

    @property
    def has_match(self) -> bool:
        """Whether two face-up cards share a rank."""
        ranks = [rank for rank in self.tops.values() if rank is not None]
        return len(ranks) != len(set(ranks))

    @property
    def pot_matches(self) -> bool:
        """Whether a face-up card shares the pot's rank."""
        return self.pot is not None and self.pot in self.tops.values()


def read_board(text: str) -> BoardReading:
    r"""Read the table part of a board (after its last blank line).

    >>> reading = read_board("Ann flips 7♣\n\n▶ Ann: 7♣ · 3 face-down · 1 face-up\n"
    ...     "Bob: 7♦ · 4 face-down · 0 face-up\nSnap Pot: 2♠ (4 cards)\nTurn: Ann")
    >>> reading.tops, reading.pot, reading.turn, reading.has_match
    ({'Ann': '7', 'Bob': '7'}, '2', 'Ann', True)
    """
    reading = BoardReading()
    table = BIDI_CONTROLS.sub("", text).split("\n\n")[-1]
    for raw_line in table.splitlines():
        line = raw_line.strip()
        marked = line.startswith(TURN_MARKERS)
        if marked:
            line = line[2:]
        name, colon, rest = line.partition(": ")
        if colon and " · " in rest:
            card = CARD.fullmatch(rest.split(" · ")[0].strip())
            reading.tops[name] = card.group(1) if card else None
            if marked:
                reading.turn = name
        elif colon and (card := CARD.search(rest)) and reading.tops:
            reading.pot = card.group(1)
    return reading


@dataclass
class Robot:
    """A robot player: the emulator user it plays as, and its style."""

    user_id: int
    style: RobotStyle
    seen: set[tuple[int, int, int]] = field(default_factory=set)
    """(chat, message, edits) of the keyboards it has already acted on."""

    def to_json(self) -> dict[str, Any]:
        """The robot as the page and the saved sandbox read it."""
        return {"user_id": self.user_id, **asdict(self.style)}


def _changed_since(changes: ChangeSignal, version: int) -> bool:
    return changes.version != version


class Robots:
    """Every robot of the sandbox, watching the emulator and pressing like people."""

    def __init__(self, emulator: Emulator, signer: CallbackSigner, rng: random.Random) -> None:
        self._emulator = emulator
        self._signer = signer
        self._rng = rng
        self.robots: dict[int, Robot] = {}
        self._seen = -1
        # A failed look waits for the next change, as every look does.
        self._loop = BackgroundLoop(
            self._watch, what="a robot reading the chats", logger=logger, backoff=Backoff(0, 0)
        )

    def add(self, user_id: int, style: RobotStyle) -> Robot:
        """Make the emulator user ``user_id`` a robot (or change its style)."""
        self._emulator.world.user(user_id)
        robot = self.robots.get(user_id)
        if robot is None:
            robot = self.robots[user_id] = Robot(user_id, style)
        robot.style = style
        self._emulator.changes.notify()
        return robot

    def start(self) -> None:
        """Start watching the chats."""
        self._loop.start()

    async def stop(self) -> None:
        """Stop watching (presses already scheduled still happen unless the emulator closes)."""
        await self._loop.stop()

    async def _watch(self) -> float:
        """Wait for a change (or 30 s), then look; the next round follows at once."""
        changes = self._emulator.changes
        await changes.wait_until(partial(_changed_since, changes, self._seen), 30.0)
        self._seen = changes.version
        self.look()
        return 0.0

    def look(self) -> None:
        """Let every robot act on the newest keyboard of each chat and topic it is in."""
        if not self.robots:
            return
        for message in self._newest_keyboards():
            chat = self._emulator.world.chat(message.chat_id)
            for robot in self.robots.values():
                if chat.role_of(robot.user_id) in {"creator", "administrator", "member"}:
                    self._act(robot, message)

    def _newest_keyboards(self) -> list[TranscriptMessage]:
        messages = self._emulator.world.messages
        newest: dict[tuple[int, int | None], TranscriptMessage] = {}
        for number, key in enumerate(reversed(messages)):
            if number >= LOOKBACK:
                break
            message = messages[key]
            place = (message.chat_id, message.message_thread_id)
            if place in newest or not message.is_from_bot or message.deleted:
                continue
            if message.reply_markup and message.reply_markup.get("inline_keyboard"):
                newest[place] = message
        return list(newest.values())

    def _act(self, robot: Robot, message: TranscriptMessage) -> None:
        mark = (message.chat_id, message.message_id, message.edits)
        if mark in robot.seen:
            return
        robot.seen.add(mark)
        if len(robot.seen) > 1000:
            robot.seen = {mark}
        buttons = self._buttons(message)
        me = self._emulator.world.user(robot.user_id)
        my_name = display_name(me.first_name, me.last_name)
        if Action.JOIN in buttons:
            if f"• {my_name}" not in BIDI_CONTROLS.sub("", message.text):
                self._press(robot, message, buttons[Action.JOIN], robot.style.reaction(self._rng))
            return
        if Action.FLIP not in buttons:
            return
        board = read_board(message.text)
        if my_name not in board.tops:
            return
        reaction = robot.style.reaction(self._rng)
        if board.pot_matches and Action.SNAP_POT in buttons:
            self._press(robot, message, buttons[Action.SNAP_POT], reaction)
        elif board.has_match:
            self._press(robot, message, buttons[Action.SNAP], reaction)
        else:
            if self._rng.random() < robot.style.wrong_rate:
                self._press(robot, message, buttons[Action.SNAP], reaction)
            if board.turn == my_name:
                self._press(robot, message, buttons[Action.FLIP], reaction * 2)

    def _buttons(self, message: TranscriptMessage) -> dict[Action, str]:
        found: dict[Action, str] = {}
        for row in (message.reply_markup or {}).get("inline_keyboard", []):
            for button in row:
                press = self._signer.decode(button.get("callback_data"))
                if press is not None:
                    found[press.action] = button["callback_data"]
        return found

    def _press(self, robot: Robot, message: TranscriptMessage, data: str, delay: float) -> None:
        press = Press(message.chat_id, message.message_id, robot.user_id, data=data, offset=delay)
        try:
            schedule_presses(self._emulator, [press])
        except ValueError:
            logger.info("robot %d could not press on message %d", robot.user_id, message.message_id)
