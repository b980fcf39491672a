"""The plain values services take and the refusals they raise.

Services know nothing of Telegram: the bot turns an update into an :class:`Actor`, a
:class:`Place` and a :class:`Receipt`, and a :class:`Refused` into a message in the
player's language.
"""

from __future__ import annotations

import enum
import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from ..game.engine import MAX_PLAYERS


@dataclass(frozen=True, slots=True)
class Actor:
    """The person acting: a Telegram user, with the names Telegram sent."""

    user_id: int
    first_name: str
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None


UNKNOWN_NAME = "?"
"""The name shown for a user the bot has no record of."""


BLANK_NAME = "👤"
"""The name shown for a user whose name shows nothing and who has no username."""
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters drawn as nothing (Hangul fillers, the blank Braille pattern): blank-looking names."""


def display_name(first_name: str | None, last_name: str | None, username: str | None = None) -> str:
    """A user's name as boards, lobbies and tables show it: first and last name.

    The one place a name is put together; a user never seen is :data:`UNKNOWN_NAME`. A name that
    shows nothing (blank-looking letters, spaces, invisible marks) gives way to the @username, or
    :data:`BLANK_NAME`: players must see who is meant.

    >>> display_name("Ada", None), display_name("Ada", "Lovelace"), display_name(None, None)
    ('Ada', 'Ada Lovelace', '?')
    >>> display_name("\u3164", None, "ada"), display_name("\u200b", " ")
    ('@ada', '👤')
    """
    if first_name is None:
        return UNKNOWN_NAME
    name = f"{first_name} {last_name}" if last_name else first_name
    if all(_shows_nothing(char) for char in name):
        return f"@{username}" if username else BLANK_NAME
    return name


def told_apart(names: Sequence[str], usernames: Sequence[str | None]) -> list[str]:
    """``names`` of one game's seats, those that seats share told apart by @username or number.

    ``Ann (@ann)``, else ``Ann (2)``: nobody passes for another player by taking their name.

    >>> told_apart(["Ann", "Bob", "Ann", "Ann"], ["ann", None, None, None])
    ['Ann (@ann)', 'Bob', 'Ann (2)', 'Ann (3)']
    """
    shared = {name for name, count in Counter(names).items() if count > 1}
    seen: Counter[str] = Counter()
    apart = []
    for name, username in zip(names, usernames, strict=True):
        if name not in shared or name == UNKNOWN_NAME:
            apart.append(name)
            continue
        seen[name] += 1
        apart.append(f"{name} (@{username})" if username else f"{name} ({seen[name]})")
    return apart


def shown_names(first_name: str, last_name: str | None, username: str | None) -> set[str]:
    """Every form a person's name may take on screen (what an erasure looks for).

    As :func:`display_name` makes it, with and without the username, and as
    :func:`told_apart` makes it when a seat shares it.

    >>> sorted(shown_names("Ann", None, "ann"))[:3]
    ['@ann', 'Ann', 'Ann (1)']
    """
    plain = display_name(first_name, last_name)
    shown = {plain, display_name(first_name, last_name, username)}
    shown |= {f"{plain} ({seat})" for seat in range(1, MAX_PLAYERS + 1)}
    if username:
        shown |= {f"@{username}", f"{plain} (@{username})"}
    return shown - {BLANK_NAME, UNKNOWN_NAME}


def _shows_nothing(char: str) -> bool:
    return char.isspace() or char in _FILLERS or unicodedata.category(char) in ("Cf", "Cc", "Mn")


class Topic(NamedTuple):
    """The key of a chat topic, where a game lives; ``thread_id`` 0 is the whole chat."""

    chat_id: int
    thread_id: int = 0


@dataclass(frozen=True, slots=True)
class Place:
    """A chat, and the forum topic in it (``thread_id`` 0: the whole chat)."""

    chat_id: int
    thread_id: int = 0
    chat_type: str = "group"
    title: str | None = None
    is_forum: bool = False

    @property
    def topic(self) -> Topic:
        """The key of this chat topic."""
        return Topic(self.chat_id, self.thread_id)

    @property
    def is_private(self) -> bool:
        """Whether this is a one-to-one chat with the bot (no games there)."""
        return self.chat_type == "private"


@dataclass(frozen=True, slots=True)
class Receipt:
    """When an update entered the bot: its stamp, and the host that took it.

    ``stamp_ns`` is wall-clock time taken at ingress, so the stamps of several hosts compare
    (as well as their clocks agree: see the README on NTP). ``update_id`` orders equal stamps
    and makes redeliveries harmless; a timer's actions have none.
    """

    stamp_ns: int
    wall: datetime
    update_id: int | None = None
    host_id: str = ""

    @classmethod
    def at(cls, stamp_ns: int, update_id: int | None = None, host_id: str = "") -> Receipt:
        """The receipt of a stamp (wall-clock ns)."""
        return cls(stamp_ns, datetime.fromtimestamp(stamp_ns / 1e9, UTC), update_id, host_id)

    @classmethod
    def now(cls, update_id: int | None = None, host_id: str = "") -> Receipt:
        """A receipt stamped now."""
        return cls.at(time.time_ns(), update_id, host_id)

    @property
    def sequence(self) -> int:
        """The number that orders calls with equal stamps."""
        return self.update_id if self.update_id is not None else 0


class Reason(enum.Enum):
    """Why an action was refused; the bot has a message for each."""

    PRIVATE_CHAT = "private_chat"
    NO_GAME = "no_game"
    GAME_EXISTS = "game_exists"
    NOT_IN_LOBBY = "not_in_lobby"
    ALREADY_JOINED = "already_joined"
    NOT_JOINED = "not_joined"
    TARGET_NOT_PLAYING = "target_not_playing"
    LOBBY_FULL = "lobby_full"
    TOO_FEW_PLAYERS = "too_few_players"
    NOT_CREATOR = "not_creator"
    NOT_ADMIN = "not_admin"
    ADMIN_UNKNOWN = "admin_unknown"
    """Telegram could not say whether the actor is an admin: refused, to be tried again."""
    NOT_PLAYING = "not_playing"
    PLAYER_OUT = "player_out"
    NOT_YOUR_TURN = "not_your_turn"
    RACE_OPEN = "race_open"
    ALREADY_CALLED = "already_called"
    REPEATED_PRESS = "repeated_press"
    OLD_BOARD = "old_board"
    GAME_OVER = "game_over"
    BAD_BUTTON = "bad_button"
    OTHER_GAME = "other_game"
    UNKNOWN_SETTING = "unknown_setting"
    BAD_SETTING_VALUE = "bad_setting_value"
    DUPLICATE_UPDATE = "duplicate_update"
    LOBBY_TOO_LONG = "lobby_too_long"
    PRIVATE_CHAT_SETTING = "private_chat_setting"
    """A private chat has no games, so of the settings it takes only its language."""


@dataclass(eq=False)
class Refused(ValueError):  # noqa: N818 - reads as "raise Refused(Reason.NO_GAME)"
    """An action the service will not carry out; nothing was changed."""

    reason: Reason
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.reason.value} {self.details}" if self.details else self.reason.value
