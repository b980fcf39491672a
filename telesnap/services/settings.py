"""Game settings: the defaults, what each may be, and reading them from storage.

A chat stores only the values it changed; everything else is the default. A
game takes a snapshot of the settings when it starts and keeps it.

>>> GameSettings.from_values({"tie_window_ms": 250}).tie_window_ms
250
>>> parse_setting("tie_window_ms", "2001")
Traceback (most recent call last):
...
telesnap.services.types.Refused: bad_setting_value {'name': 'tie_window_ms', 'allowed': '0-2000'}
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..game import MatchMode
from .types import Reason, Refused

DEFAULT_TIE_WINDOW_MS = 100
"""Two presses less than this apart tie. 100 ms is below the spread of human reaction
times (about 150-300 ms for one person) yet above the jitter Telegram's delivery adds to
two presses made together, so "at the same time" means what players think it means."""

TIE_WINDOW_RANGE = (0, 2000)

SETTING_NAMES = {
    "tie_window": "tie_window_ms",
    "match_mode": "match_mode",
    "penalty": "wrong_call_penalty",
    "flip_limit": "flip_limit",
}
"""The names people type in ``/settings NAME VALUE``, and the setting each one changes."""


@dataclass(frozen=True, slots=True)
class GameSettings:
    """The settings a game plays by."""

    tie_window_ms: int = DEFAULT_TIE_WINDOW_MS
    match_mode: MatchMode = MatchMode.RANK
    wrong_call_penalty: bool = True
    flip_limit: int | None = None

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> GameSettings:
        """Build settings from stored values; unknown or malformed ones fall back to defaults."""
        settings = cls()
        for name, value in values.items():
            try:
                settings = dataclasses.replace(settings, **{name: _coerce(name, value)})
            except (Refused, TypeError):
                continue
        return settings

    def to_values(self) -> dict[str, Any]:
        """The settings as JSON-ready values (for the game's snapshot)."""
        return {
            "tie_window_ms": self.tie_window_ms,
            "match_mode": self.match_mode.value,
            "wrong_call_penalty": self.wrong_call_penalty,
            "flip_limit": self.flip_limit,
        }


def _coerce(name: str, value: Any) -> Any:
    if name == "tie_window_ms":
        return _integer(name, value, *TIE_WINDOW_RANGE)
    if name == "match_mode":
        try:
            return MatchMode(value)
        except ValueError:
            raise Refused(
                Reason.BAD_SETTING_VALUE,
                {"name": name, "allowed": ", ".join(mode.value for mode in MatchMode)},
            ) from None
    if name == "wrong_call_penalty":
        if isinstance(value, bool):
            return value
        return _switch(name, value)
    if name == "flip_limit":
        if value in (None, 0, "0", "off"):
            return None
        return _integer(name, value, 10, 100_000)
    raise Refused(Reason.UNKNOWN_SETTING, {"name": name})


def _integer(name: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = low - 1
    if isinstance(value, bool) or not low <= number <= high:
        raise Refused(Reason.BAD_SETTING_VALUE, {"name": name, "allowed": f"{low}-{high}"})
    return number


def _switch(name: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text in ("on", "yes", "true", "1"):
        return True
    if text in ("off", "no", "false", "0"):
        return False
    raise Refused(Reason.BAD_SETTING_VALUE, {"name": name, "allowed": "on, off"})


def parse_setting(name: str, text: str) -> Any:
    """Check a setting typed by a person and return its stored value, or raise ``Refused``."""
    value = _coerce(name, text.strip())
    return value.value if isinstance(value, MatchMode) else value
