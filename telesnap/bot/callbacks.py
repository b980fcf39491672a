"""The callback-data protocol of the bot's buttons, signed so presses cannot be forged.

Each button carries ``action:game:version:tag``. The tag is an HMAC of the
rest, keyed by a secret derived from the bot token, so a client that edits
the data (another game, a future board) is caught; the game id and the board
version let the bot refuse foreign and stale presses.

>>> signer = CallbackSigner(b"secret")
>>> data = signer.encode(Action.SNAP, game_id=12, version=7)
>>> len(data.encode()) <= 64
True
>>> signer.decode(data)
ButtonPress(action=<Action.SNAP: 's'>, game_id=12, version=7)
>>> signer.decode(data.replace(":7:", ":8:")) is None
True
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
from dataclasses import dataclass

MAX_CALLBACK_BYTES = 64
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

    def encode(self, action: Action, *, game_id: int, version: int) -> str:
        """The callback data of a button."""
        body = f"{action.value}:{game_id}:{version}"
        return f"{body}:{self._tag(body)}"

    def decode(self, data: str | None) -> ButtonPress | None:
        """The press a callback data stands for, or None if it is not one of ours."""
        match = _PATTERN.fullmatch(data or "")
        if match is None:
            return None
        action_code, game_id, version, given = match.groups()
        body = f"{action_code}:{game_id}:{version}"
        if not is_signed(self._secret, body, given):
            return None
        try:
            action = Action(action_code)
        except ValueError:
            return None
        return ButtonPress(action, int(game_id), int(version))
