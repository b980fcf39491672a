"""SQLAlchemy 2 typed models, one module per table group, sharing :data:`Base.metadata`."""

from .accounts import CHAT_TYPES, WHOLE_CHAT, Chat, ChatSettings, User
from .base import Base, UtcDateTime, utc_now
from .games import ACTIVE_STATUSES, BoardView, Game, GameOperation, GamePlayer, GameStatus
from .infrastructure import ProcessedUpdate, Timer
from .outbox import OutboxMessage, OutboxSender, OutboxState
from .races import Race, RaceState
from .stats import ALL_CHATS, GamePlayerResult, GameResult, PlayerStats, ReactionCount

__all__ = [
    "ACTIVE_STATUSES",
    "ALL_CHATS",
    "CHAT_TYPES",
    "WHOLE_CHAT",
    "Base",
    "BoardView",
    "Chat",
    "ChatSettings",
    "Game",
    "GameOperation",
    "GamePlayer",
    "GamePlayerResult",
    "GameResult",
    "GameStatus",
    "OutboxMessage",
    "OutboxSender",
    "OutboxState",
    "PlayerStats",
    "ProcessedUpdate",
    "Race",
    "RaceState",
    "ReactionCount",
    "Timer",
    "User",
    "UtcDateTime",
    "utc_now",
]
