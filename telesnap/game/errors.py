"""The exceptions the engine raises when an action is not allowed.

Every error is a :class:`ValueError`, so callers that validate input can catch one
family. Messages are written for players: they can be shown as they are.

>>> issubclass(NotYourTurnError, ValueError)
True
>>> NotYourTurnError("Bob flips now").reason
'not_your_turn'
"""

from __future__ import annotations


class SnapError(ValueError):
    """The base of every error the engine raises.

    ``reason`` is a stable code for why an action was refused (the services answer each with
    its own message); None for bad input, where the message says what.
    """

    reason: str | None = None


class CardParseError(SnapError):
    """Text that does not name a card."""


class SetupError(SnapError):
    """A game that cannot be set up as asked."""


class GameOverError(SnapError):
    """An action on a game that has ended."""

    reason = "game_over"


class NotInGameError(SnapError):
    """An action by a seat that is not (or no longer) in the game."""

    reason = "not_playing"


class PlayerOutError(SnapError):
    """An action by a player who has no cards left."""

    reason = "player_out"


class NotYourTurnError(SnapError):
    """A flip by a player whose turn it is not."""

    reason = "not_your_turn"


class RaceInProgressError(SnapError):
    """An action that must wait until the current Snap race is resolved."""

    reason = "race_open"


class NoRaceError(SnapError):
    """A request to resolve a race when no call is waiting."""


class DuplicateCallError(SnapError):
    """A second call by the same player in one race."""

    reason = "already_called"


class RepeatedPressError(DuplicateCallError):
    """A button pressed again by the same player on the same board: it counts once."""

    reason = "repeated_press"


class HistoryError(SnapError):
    """A history whose operations do not fit the game they are replayed on."""
