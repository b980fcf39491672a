"""What a chat's boards looked like over time, read from the emulator's edit history.

Each bot message is a run of states: as sent, then after each edit (the emulator
keeps every earlier version with the moment an edit replaced it), on the
emulator's clock. So a test can ask how many boards had buttons at any moment
of a game, and when its last buttons went.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from telesnap.emulator.records import TranscriptMessage

ENDINGS = ("final standings", "was stopped")
"""Words of the message that ends a game."""


@dataclass(frozen=True)
class State:
    """A message as it was from ``since`` until its next edit."""

    since: float
    text: str
    has_buttons: bool


def states(message: TranscriptMessage) -> list[State]:
    """The message's versions, oldest first."""
    starts = [message.sent_at, *(revision.replaced_at for revision in message.history)]
    versions = [*((r.text, r.reply_markup) for r in message.history)]
    versions.append((message.text, message.reply_markup))
    return [
        State(since, text, bool(markup and markup.get("inline_keyboard")))
        for since, (text, markup) in zip(starts, versions, strict=True)
    ]


def is_board(message: TranscriptMessage) -> bool:
    """Whether the message ever showed a game's table."""
    return any("face-down" in state.text for state in states(message))


def boards_with_buttons(messages: Sequence[TranscriptMessage], moment: float) -> int:
    """How many boards had buttons at ``moment``."""
    count = 0
    for message in messages:
        now = [state for state in states(message) if state.since <= moment]
        count += bool(now and now[-1].has_buttons)
    return count


def most_with_buttons(messages: Sequence[TranscriptMessage]) -> int:
    """The most boards that had buttons at one moment."""
    boards = [m for m in messages if is_board(m)]
    moments = {state.since for message in boards for state in states(message)}
    return max((boards_with_buttons(boards, moment) for moment in moments), default=0)


def ended_at(messages: Sequence[TranscriptMessage]) -> float | None:
    """When the game's end was first shown (None: not yet)."""
    moments = [
        state.since
        for message in messages
        for state in states(message)
        if any(ending in state.text for ending in ENDINGS)
    ]
    return min(moments, default=None)
