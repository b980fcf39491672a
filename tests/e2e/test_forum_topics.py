"""Four games in the topics of one forum share its 20 messages a minute fairly.

The emulator enforces Telegram's limits and the bot its own, both windows
shortened ``SCALE`` times (as in ``bench/scaled_group.py``), so a few minutes of
Telegram time take seconds. Every time below is read from the emulator's clock
(the transcript's ``sent_at``, a press's ``answered_at``) and scaled back to
Telegram's seconds.

Three topics start their games at once; the fourth starts once the others
play (as in issue 19, where its first board came 40 s after ``/startgame``).
The players of each topic flip on every board as soon as it reaches them.

**The bounds, from the pace.** After its burst a group gets one send every
``INTERVAL_S`` = 61/17 ≈ 3.6 s. In the ``messages`` board style a board costs
two sends: the board, and the removal of the buttons of the board before it
(queued right behind it). With the chat's posts in one line, in the order they
came, and each game's waiting boards merged into one post, a topic's board or
lobby waits behind at most one board and one tidy edit of each other topic:
a round of ``2 * TOPICS`` sends (about 29 s). So no topic waits more than a
round for its first board (a start costs the lobby's edit and the first
board), between two of its boards, or from a flip to the board that shows it.
The bounds add four slots (about a wall second here) for the players'
reactions and a loaded machine; a line that serves one topic's posts before
another's waiting ones goes far past them (a lane that put each new post
first, tried once: first boards 60 to 154 s late).
"""

from __future__ import annotations

import asyncio
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from telesnap.bot.delivery.pace import FloodLimits as BotFloodLimits
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator, running_emulator

from .harness import Table, database_file

SCALE = 12.0
TELEGRAM = TelegramFloodLimits(group_window_seconds=60.0 / SCALE)
BOT = BotFloodLimits(group_window_s=61.0 / SCALE)
INTERVAL_S = 61.0 / 17  # Telegram seconds between two sends of a busy group
TOPICS = 4
FLIPS = 4
"""Flips each topic's players make, one on each board that reaches them."""
ROUND_S = 2 * TOPICS * INTERVAL_S
"""Every topic's board and tidy edit once: a fair turn of the chat's pace."""
MARGIN_S = 4 * INTERVAL_S
"""For the players' reactions and a loaded machine (a wall second is ``SCALE`` seconds here)."""
FIRST_BOARD_BOUND_S = ROUND_S + MARGIN_S
WAIT_BOUND_S = ROUND_S + MARGIN_S
FLIP_LINE = re.compile(r"^\w+ (?:turns their pile over and )?flips (?:(\d+) cards)?", re.MULTILINE)


@dataclass
class Topic:
    table: Table
    name: str
    started_at: float = 0.0
    committed: list[float] = field(default_factory=list)
    """When each accepted flip was answered (it was committed by then), emulator clock."""


async def test_four_topics_of_a_forum_take_fair_turns_of_the_pace(tmp_path: Path) -> None:
    async with running_emulator(EmulatorConfig(flood=TELEGRAM)) as emulator:
        client = emulator.client
        topics = await _forum(emulator, database_file(tmp_path))
        runner = await topics[0].table.start_bot()
        for topic in topics[1:]:
            topic.table.runner = runner
        try:
            await asyncio.gather(*(_open(topic) for topic in topics))
            *together, fourth = topics
            await asyncio.gather(*(_start(topic) for topic in together))
            playing = (_play(topic) for topic in together)
            await asyncio.gather(*playing, _join_later(fourth, together[0]))
            for topic in topics:
                await client.wait_for(
                    lambda topic=topic: _all_shown(topic),
                    timeout=60,
                    what=f"every flip of {topic.name} shown",
                )
            figures = [await _figures(topic) for topic in topics]
        finally:
            await topics[0].table.stop_bot()
        for name, first, wait, late in figures:
            print(
                f"{name}: first board {first:.1f} s after /startgame, longest wait between "
                f"boards {wait:.1f} s, longest flip-to-shown {late:.1f} s (Telegram time)"
            )
        print(f"bounds: first board {FIRST_BOARD_BOUND_S:.0f} s, wait {WAIT_BOUND_S:.0f} s")
        for name, first, wait, late in figures:
            assert first <= FIRST_BOARD_BOUND_S, f"{name}'s first board came {first:.1f} s late"
            assert wait <= WAIT_BOUND_S, f"{name} waited {wait:.1f} s between two boards"
            assert late <= WAIT_BOUND_S, f"a flip of {name} was shown {late:.1f} s after it"
        refused = [call for call in await client.calls() if call.status == 429]
        assert refused == []
        assert await client.violations() == []


async def _forum(emulator: RunningEmulator, database_url: str) -> list[Topic]:
    """A forum supergroup with four topics, two players of their own in each."""
    client = emulator.client
    pairs = [(f"A{index}", f"B{index}") for index in range(TOPICS)]
    users = {name: int((await client.create_user(name))["id"]) for pair in pairs for name in pair}
    chat = await client.create_chat(
        "supergroup", title="Snap forum", members=list(users.values()), forum=True
    )
    topics = []
    for index, pair in enumerate(pairs):
        players = {name: users[name] for name in pair}
        table = Table(emulator, database_url, int(chat["id"]), players, limits=BOT)
        table.thread_id = await client.create_topic(table.chat_id, f"Table {index}")
        topics.append(Topic(table, f"topic {index}"))
    return topics


async def _open(topic: Topic) -> None:
    """The first player opens a lobby in the topic and the second joins."""
    table = topic.table
    first, second = table.players
    await table.command(first, "newgame")
    lobby = await table.wait_for_text("A game of Snap is starting", limit_s=60)
    await table.press(second, lobby, "Join")


async def _start(topic: Topic) -> None:
    table = topic.table
    command = await table.command(next(iter(table.players)), "startgame")
    sent = await table.client.transcript(table.chat_id, include_users=True)
    topic.started_at = next(m.sent_at for m in sent if m.message_id == command)


async def _join_later(topic: Topic, playing: Topic) -> None:
    """Start the topic's game once another topic's game is under way, then play it."""
    await playing.table.client.wait_for(
        lambda: _boards_shown(playing, 2), timeout=60, what=f"two boards of {playing.name}"
    )
    await _start(topic)
    await _play(topic)


async def _boards_shown(topic: Topic, count: int) -> bool | None:
    return True if len(await _boards(topic)) >= count else None


async def _play(topic: Topic) -> None:
    """The player on turn flips on each board as soon as it reaches the topic."""
    table = topic.table
    for _ in range(FLIPS):
        board = await table.next_board(limit_s=60)
        assert board.turn is not None
        toast = await table.press_action(board.turn, board.message, "f")
        assert toast.text == "", f"{topic.name}: the flip was refused: {toast.text}"
        assert toast.answered_at is not None
        topic.committed.append(toast.answered_at)


async def _boards(topic: Topic) -> list[TranscriptMessage]:
    boards = [m for m in await topic.table.messages() if "face-down" in m.text]
    return sorted(boards, key=lambda m: m.sent_at)


def _flips_in(message: TranscriptMessage) -> int:
    return sum(int(count or 1) for count in FLIP_LINE.findall(message.text))


async def _all_shown(topic: Topic) -> bool | None:
    shown = sum(_flips_in(board) for board in await _boards(topic))
    return True if shown >= len(topic.committed) else None


async def _figures(topic: Topic) -> tuple[str, float, float, float]:
    """The first board's delay, the longest wait between boards, the latest flip shown."""
    boards = await _boards(topic)
    assert boards, f"{topic.name} shows no board"
    times = [board.sent_at for board in boards]
    first = (times[0] - topic.started_at) * SCALE
    wait = max(later - earlier for earlier, later in itertools.pairwise(times))
    shown_by: list[float] = []  # when the n-th flip of the topic first appeared
    for board in boards:
        shown_by += [board.sent_at] * _flips_in(board)
    assert len(shown_by) == len(topic.committed), f"{topic.name}: flips shown ≠ flips made"
    late = max(s - c for s, c in zip(shown_by, sorted(topic.committed), strict=True))
    return topic.name, first, wait * SCALE, late * SCALE
