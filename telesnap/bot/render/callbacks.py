"""The callback-data protocol of the bot's buttons, signed so presses cannot be forged.

Each button carries ``action:game:version:tag``; the tag, an HMAC keyed from the bot token,
catches edited data, and the game id and board version let the bot refuse foreign and stale
presses. A settings button's tag also signs its chat (which the data does not carry), so a
menu's data pressed in another chat is not authentic there.

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
from typing import ClassVar, Self

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


def carries_button(markup: InlineKeyboardMarkup | None, data: str | None) -> bool:
    """Whether a message's keyboard has a button with this callback data.

    A modified client can send any data for any bot message, so a button that rewrites its
    message (a menu, a leaderboard) is checked to be on it.
    """
    rows: Sequence[Sequence[object]] = markup.inline_keyboard if markup is not None else ()
    return data is not None and any(
        getattr(button, "callback_data", None) == data for row in rows for button in row
    )


class Signer:
    """Signs callback data as ``<body>:<tag>``: an 11-character HMAC of the body.

    The key is derived from the bot token (so every worker has it) with a purpose per kind
    of button; a chat-bound button's tag also signs its chat, which its data does not carry.
    """

    PURPOSE: ClassVar[bytes]

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def for_token(cls, token: str) -> Self:
        """The signer whose key is derived from the bot token."""
        return cls(hashlib.sha256(cls.PURPOSE + b":" + token.encode()).digest())

    def _tag(self, body: str, chat_id: int | None) -> str:
        signed = body if chat_id is None else f"{body}@{chat_id}"
        digest = hmac.new(self._secret, signed.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:8]).decode().rstrip("=")

    def signed(self, body: str, chat_id: int | None = None) -> str:
        """``body`` with its tag (signing ``chat_id`` too, for a button bound to it)."""
        return f"{body}:{self._tag(body, chat_id)}"

    def authentic_body(self, data: str, chat_id: int | None = None) -> str | None:
        """The body of signed ``data``, or None if its tag is not ours (compared in fixed time)."""
        body, _, given = data.rpartition(":")
        return body if hmac.compare_digest(given, self._tag(body, chat_id)) else None


class CallbackSigner(Signer):
    """Encodes and checks the callback data of the game's buttons."""

    PURPOSE = b"telesnap-callback"

    def encode(
        self, action: Action, *, game_id: int, version: int, chat_id: int | None = None
    ) -> str:
        """The callback data of a button; ``chat_id``: the chat a chat-bound button is sent to."""
        if action in CHAT_BOUND and chat_id is None:
            raise ValueError(f"a {action.name} button is bound to a chat: give chat_id")
        bound_to = chat_id if action in CHAT_BOUND else None
        return self.signed(f"{action.value}:{game_id}:{version}", bound_to)

    def decode(self, data: str | None, *, chat_id: int | None = None) -> ButtonPress | None:
        """The press a callback data stands for, or None if it is not one of ours.

        ``chat_id``: the pressed message's chat; a chat-bound button is authentic only there.
        """
        match = _PATTERN.fullmatch(data or "")
        if data is None or match is None:
            return None
        action_code, game_id, version, _ = match.groups()
        try:
            action = Action(action_code)
        except ValueError:
            return None
        if action in CHAT_BOUND and chat_id is None:
            return None
        if self.authentic_body(data, chat_id if action in CHAT_BOUND else None) is None:
            return None
        return ButtonPress(action, int(game_id), int(version))
