"""SQLAlchemy 2 typed models, one module per table group, sharing :data:`Base.metadata`."""

from .accounts import CHAT_TYPES, WHOLE_CHAT, Chat, ChatSettings, User
from .alerts import DirectChat, LobbyAlert
from .base import Base, UtcDateTime, fits_bigint, utc_now
from .games import ACTIVE_STATUSES, Game, GameOperation, GamePlayer, GameStatus
from .inbox import NO_CHAT, InboxUpdate
from .infrastructure import Timer
from .outbox import OutboxMessage, OutboxSender, OutboxState
from .races import Race, RaceState
from .stats import ALL_CHATS, GamePlayerResult, GameResult, PlayerStats, ReactionCount

__all__ = [
    "ACTIVE_STATUSES",
    "ALL_CHATS",
    "CHAT_TYPES",
    "NO_CHAT",
    "WHOLE_CHAT",
    "Base",
    "Chat",
    "ChatSettings",
    "DirectChat",
    "Game",
    "GameOperation",
    "GamePlayer",
    "GamePlayerResult",
    "GameResult",
    "GameStatus",
    "InboxUpdate",
    "LobbyAlert",
    "OutboxMessage",
    "OutboxSender",
    "OutboxState",
    "PlayerStats",
    "Race",
    "RaceState",
    "ReactionCount",
    "Timer",
    "User",
    "UtcDateTime",
    "fits_bigint",
    "utc_now",
]
