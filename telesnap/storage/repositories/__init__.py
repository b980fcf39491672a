"""Repositories: small typed query objects, one per table group, over one session."""

from .accounts import ChatRepository, ChatSettingsRepository, UserRepository
from .alerts import AlertRepository
from .bookkeeping import TimerRepository
from .games import GameRepository
from .history import HistoryRepository, OperationRecord
from .inbox import (
    INBOX_CHANNEL,
    CommittedMarks,
    InboxRepository,
    StoredElsewhere,
    StoredUpdate,
)
from .outbox import OUTBOX_CHANNEL, OutboxRepository, ShownBoard
from .races import RaceRepository
from .stats import Ranking, StatsRepository

__all__ = [
    "INBOX_CHANNEL",
    "OUTBOX_CHANNEL",
    "AlertRepository",
    "ChatRepository",
    "ChatSettingsRepository",
    "CommittedMarks",
    "GameRepository",
    "HistoryRepository",
    "InboxRepository",
    "OperationRecord",
    "OutboxRepository",
    "RaceRepository",
    "Ranking",
    "ShownBoard",
    "StatsRepository",
    "StoredElsewhere",
    "StoredUpdate",
    "TimerRepository",
    "UserRepository",
]
