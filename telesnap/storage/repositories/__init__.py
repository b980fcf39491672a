"""Repositories: small typed query objects, one per table group, over one session."""

from .accounts import ChatRepository, ChatSettingsRepository, UserRepository
from .board_views import BoardViewRepository, ShownBoard
from .bookkeeping import ProcessedUpdateRepository, TimerRepository
from .games import GameRepository
from .history import HistoryRepository, OperationRecord
from .outbox import OutboxRepository
from .races import RaceRepository
from .stats import Ranking, StatsRepository

__all__ = [
    "BoardViewRepository",
    "ChatRepository",
    "ChatSettingsRepository",
    "GameRepository",
    "HistoryRepository",
    "OperationRecord",
    "OutboxRepository",
    "ProcessedUpdateRepository",
    "RaceRepository",
    "Ranking",
    "ShownBoard",
    "StatsRepository",
    "TimerRepository",
    "UserRepository",
]
