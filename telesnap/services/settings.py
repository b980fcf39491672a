"""Chat settings: the defaults, what each may be, and reading them from storage.

A chat stores only the values it changed. A game keeps the snapshot it took at its start
(the language, the chat's, applies at once). A number below a setting's range is refused,
0 included: "off" is the word for off.

>>> GameSettings.from_values({"tie_window_ms": 250}).tie_window_ms
250
>>> parse_setting("tie_window", "2001")
Traceback (most recent call last):
...
telesnap.services.types.Refused: bad_setting_value {'name': 'tie_window', 'allowed': '0-2000'}
>>> parse_setting("turn_timer", "off")
('turn_timer_s', None)
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

DEFAULT_LANGUAGE = "en"
"""The language of the code's messages, and of a chat or user with no supported language."""
LANGUAGES = (DEFAULT_LANGUAGE, "mk", "sw", "es", "ar", "th")
"""The languages the bot speaks: English and the languages of the rule documents the game
came with. The one list: the language setting, the bot's catalogs and ``scripts/i18n.py``
all read it."""

AWAY_ACTIONS = ("auto_flip", "skip")

BOARD_STYLES = ("messages", "live")
"""How a game is shown: a message per board (each flip stays in the chat, only the
newest keeps buttons), or one live message per game, edited in place."""

DEFAULT_KEEP_AFTER_REMOVAL_DAYS = 30
"""A chat that removed the bot is erased this long after (long enough to add it back)."""


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One setting: its public name, its field, what it accepts, and menu presets."""

    name: str
    field: str
    kind: str  # "int", "choice" or "switch"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    optional: bool = False  # "off" is allowed (the value is None)
    presets: tuple[Any, ...] = ()

    @property
    def allowed(self) -> str:
        """What the setting accepts, as players are told."""
        if self.kind == "switch":
            return "on, off"
        if self.kind == "choice":
            return ", ".join(self.choices)
        return f"{self.low}-{self.high}" + (", off" if self.optional else "")


SPECS: tuple[SettingSpec, ...] = (
    SettingSpec("tie_window", "tie_window_ms", "int", 0, 2000,
                presets=(0, 50, 100, 200, 500, 1000, 2000)),
    SettingSpec("turn_timer", "turn_timer_s", "int", 10, 86_400, optional=True,
                presets=(None, 30, 60, 300, 900, 3600, 86_400)),
    SettingSpec("when_away", "away_action", "choice", choices=AWAY_ACTIONS,
                presets=AWAY_ACTIONS),
    SettingSpec("afk_limit", "afk_limit", "int", 1, 20, presets=(1, 2, 3, 5, 10)),
    SettingSpec("match_mode", "match_mode", "choice",
                choices=tuple(mode.value for mode in MatchMode),
                presets=tuple(mode.value for mode in MatchMode)),
    SettingSpec("penalty", "wrong_call_penalty", "switch", presets=(True, False)),
    SettingSpec("flip_limit", "flip_limit", "int", 10, 100_000, optional=True,
                presets=(None, 100, 300, 1000)),
    SettingSpec("time_limit", "time_limit_min", "int", 1, 10_080, optional=True,
                presets=(None, 15, 30, 60, 240, 1440)),
    SettingSpec("lobby_expiry", "lobby_expiry_min", "int", 1, 1440,
                presets=(10, 30, 60, 240, 1440)),
    SettingSpec("idle_limit", "idle_limit_min", "int", 10, 10_080,
                presets=(60, 240, 1440, 4320, 10_080)),
    SettingSpec("language", "language", "choice", choices=LANGUAGES, presets=LANGUAGES),
    SettingSpec("shared_stats", "shared_stats", "switch", presets=(True, False)),
    SettingSpec("keep_after_removal", "keep_after_removal_days", "int", 1, 365,
                presets=(1, 7, 30, 90, 365)),
    SettingSpec("board_style", "board_style", "choice", choices=BOARD_STYLES,
                presets=BOARD_STYLES),
)  # fmt: skip
"""Every setting, in the order ``/settings`` shows them."""

SPEC_BY_NAME = {spec.name: spec for spec in SPECS}
SPEC_BY_FIELD = {spec.field: spec for spec in SPECS}


@dataclass(frozen=True, slots=True)
class GameSettings:
    """The settings of a chat topic, and of a game (a snapshot taken at its start)."""

    tie_window_ms: int = DEFAULT_TIE_WINDOW_MS
    turn_timer_s: int | None = 300
    away_action: str = "auto_flip"
    afk_limit: int = 3
    match_mode: MatchMode = MatchMode.RANK
    wrong_call_penalty: bool = True
    flip_limit: int | None = None
    time_limit_min: int | None = None
    lobby_expiry_min: int = 60
    idle_limit_min: int = 1440
    language: str | None = None
    shared_stats: bool = False
    """Whether this chat's people are shown in figures across chats and the global board."""
    keep_after_removal_days: int = DEFAULT_KEEP_AFTER_REMOVAL_DAYS
    """How long the chat's data is kept once the bot is removed from it."""
    board_style: str = BOARD_STYLES[0]
    """A message per board, or one live message per game (see :data:`BOARD_STYLES`)."""

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> GameSettings:
        """Build settings from stored values; unknown or malformed ones fall back to defaults."""
        settings = cls()
        for field, value in values.items():
            spec = SPEC_BY_FIELD.get(field)
            if spec is None:
                continue
            try:
                coerced = _coerce(spec, value)
            except Refused:
                continue
            if field == "match_mode":
                coerced = MatchMode(coerced)
            settings = dataclasses.replace(settings, **{field: coerced})
        return settings

    def to_values(self) -> dict[str, Any]:
        """The settings as JSON-ready values (for the game's snapshot)."""
        values = {spec.field: getattr(self, spec.field) for spec in SPECS}
        values["match_mode"] = self.match_mode.value
        return values

    def value_of(self, spec: SettingSpec) -> Any:
        """The JSON-ready value of one setting."""
        return self.to_values()[spec.field]


def _coerce(spec: SettingSpec, value: Any) -> Any:
    """The stored value of ``spec`` for ``value`` (typed or stored), or ``Refused``."""
    refused = Refused(Reason.BAD_SETTING_VALUE, {"name": spec.name, "allowed": spec.allowed})
    text = str(value).strip().lower() if not isinstance(value, bool) else ""
    if spec.optional and (value is None or text in ("off", "none")):
        return None
    if spec.kind == "switch":
        if isinstance(value, bool):
            return value
        if text in ("on", "yes", "true", "1"):
            return True
        if text in ("off", "no", "false", "0"):
            return False
        raise refused
    if spec.kind == "choice":
        if text in spec.choices:
            return text
        raise refused
    if isinstance(value, bool):
        raise refused
    try:
        number = int(text)
    except ValueError:
        raise refused from None
    if not spec.low <= number <= spec.high:
        raise refused
    return number


def parse_setting(name: str, text: str) -> tuple[str, Any]:
    """Check a setting typed by a person; return its field and stored value, or ``Refused``."""
    spec = SPEC_BY_NAME.get(name.strip().lower())
    if spec is None:
        raise Refused(Reason.UNKNOWN_SETTING, {"name": name})
    return spec.field, _coerce(spec, text)
