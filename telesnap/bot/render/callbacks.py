"""The callback-data protocol of the bot's buttons, signed so presses cannot be forged.

Each button carries ``action:game:version:tag``. The tag is an HMAC of the
rest, keyed by a secret derived from the bot token, so a client that edits
the data (another game, a future board) is caught; the game id and the board
version let the bot refuse foreign and stale presses.

A settings button is bound to its chat as well: its tag signs the chat's id,
which the data does not carry (the pressed message tells it), so a menu's data
pressed in another chat is not authentic there.

>>> signer = CallbackSigner(b"secret")
>>> data = signer.encode(Action.SNAP, game_id=12, version=7)
>>> len(data.encode()) <= 64
True
>>> signer.decode(data)
ButtonPress(action=<Action.SNAP: 's'>, game_id=12, version=7)
>>> signer.decode(data.replace(":7:", ":8:")) is None
True
>>> menu = signer.encode(Action.SETTINGS, game_id=0, version=0, chat_id=-100)
>>> signer.decode(menu, chat_id=-100)
ButtonPress(action=<Action.SETTINGS: 'm'>, game_id=0, version=0)
>>> signer.decode(menu, chat_id=-200) is None
True
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardMarkup

_PATTERN = re.compile(r"([a-z]):(\d{1,12}):(\d{1,9}):([A-Za-z0-9_-]{11})")


class Action(enum.Enum):
    """What a button does."""

    JOIN = "j"
    LEAVE = "l"
    START = "b"
    FLIP = "f"
    SNAP = "s"
    SNAP_POT = "p"
    SETTINGS = "m"  # game_id carries the setting, version the choice (see settings_menu)


CHAT_BOUND = frozenset({Action.SETTINGS})
"""The actions whose buttons are signed with their chat (no game binds them to one)."""


def pattern_for(action: Action) -> str:
    """The anchored pattern the handler of ``action``'s buttons listens to.

    >>> import re
    >>> data = CallbackSigner(b"secret").encode(Action.FLIP, game_id=3, version=9)
    >>> [bool(re.match(pattern_for(action), data)) for action in (Action.FLIP, Action.SNAP)]
    [True, False]
    """
    return rf"^{action.value}:\d{{1,12}}:\d{{1,9}}:[A-Za-z0-9_-]{{11}}$"


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A decoded, authentic button press."""

    action: Action
    game_id: int
    version: int


def key_for(token: str, purpose: bytes) -> bytes:
    """A signing key derived from the bot token: the same in every worker, one per purpose."""
    return hashlib.sha256(purpose + b":" + token.encode()).digest()


def chat_bound(body: str, chat_id: int) -> str:
    """What a chat-bound button's tag signs: its data and its chat."""
    return f"{body}@{chat_id}"


def carries_button(markup: InlineKeyboardMarkup | None, data: str | None) -> bool:
    """Whether a message's keyboard has a button with this callback data.

    Telegram lets a modified client send any data for any message of the bot, so a
    button that rewrites its message (a menu, a leaderboard) is checked to be on it.
    """
    rows: Sequence[Sequence[object]] = markup.inline_keyboard if markup is not None else ()
    return data is not None and any(
        getattr(button, "callback_data", None) == data for row in rows for button in row
    )


def tag(secret: bytes, body: str) -> str:
    """The 11-character HMAC tag that signs ``body``."""
    digest = hmac.new(secret, body.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:8]).decode().rstrip("=")


def is_signed(secret: bytes, body: str, given_tag: str) -> bool:
    """Whether ``given_tag`` is the tag of ``body`` (compared in constant time)."""
    return hmac.compare_digest(given_tag, tag(secret, body))


class CallbackSigner:
    """Encodes and checks the callback data of the bot's buttons."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def for_token(cls, token: str) -> CallbackSigner:
        """A signer whose key is derived from the bot token (the same for every worker)."""
        return cls(key_for(token, b"telesnap-callback"))

    def _tag(self, body: str) -> str:
        return tag(self._secret, body)

    def encode(
        self, action: Action, *, game_id: int, version: int, chat_id: int | None = None
    ) -> str:
        """The callback data of a button; ``chat_id``: the chat a chat-bound button is sent to."""
        body = f"{action.value}:{game_id}:{version}"
        if action in CHAT_BOUND:
            if chat_id is None:
                raise ValueError(f"a {action.name} button is bound to a chat: give chat_id")
            return f"{body}:{self._tag(chat_bound(body, chat_id))}"
        return f"{body}:{self._tag(body)}"

    def decode(self, data: str | None, *, chat_id: int | None = None) -> ButtonPress | None:
        """The press a callback data stands for, or None if it is not one of ours.

        ``chat_id``: the chat of the pressed message; a chat-bound button is
        authentic only in the chat it was sent to.
        """
        match = _PATTERN.fullmatch(data or "")
        if match is None:
            return None
        action_code, game_id, version, given = match.groups()
        try:
            action = Action(action_code)
        except ValueError:
            return None
        body = f"{action_code}:{game_id}:{version}"
        if action in CHAT_BOUND:
            if chat_id is None:
                return None
            body = chat_bound(body, chat_id)
        if not is_signed(self._secret, body, given):
            return None
        return ButtonPress(action, int(game_id), int(version))
