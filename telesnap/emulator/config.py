"""How an emulator behaves: the bot it plays host to, its limits and its clock.

>>> EmulatorConfig().bot_id
123456789
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .guard import new_key

Clock = Callable[[], float]
"""A callable returning monotonic seconds; tests pass a fake one to move time."""


@dataclass(frozen=True)
class FloodLimits:
    """Telegram's flood limits on messages and edits; ``enabled=False`` switches them off."""

    enabled: bool = True
    group_per_minute: int = 20
    group_window_seconds: float = 60.0
    """The rolling window of ``group_per_minute`` (shorter in tests that need to see it)."""
    private_per_second: float = 1.0
    private_burst: int = 3
    global_per_second: int = 30


@dataclass(frozen=True)
class EmulatorConfig:
    """Everything that can be tuned about an emulator."""

    token: str = "123456789:TEST-telesnap-emulator-token"
    bot_username: str = "telesnap_test_bot"
    bot_first_name: str = "Telesnap Test"
    flood: FloodLimits = field(default_factory=FloodLimits)
    callback_answer_timeout: float = 15.0
    webhook_retry_initial: float = 0.05
    webhook_retry_max: float = 2.0
    webhook_timeout: float = 10.0
    clock: Clock = time.monotonic
    log_limit: int = 10_000
    """How many calls, presses, violations and updates the logs keep (the oldest go first)."""
    messages_kept_per_chat: int = 10_000
    """How many of each chat's latest messages are kept (forgotten ones are not found)."""
    versions_kept_per_message: int = 1_000
    """How many earlier versions of an edited message its history keeps (the oldest go first)."""
    file_store_bytes: int = 64 * 1024 * 1024
    """How many bytes of uploaded files are kept to serve (the oldest go first)."""
    access_key: str | None = field(default_factory=new_key)
    """The run's key the page and the control API need (see :mod:`.guard`); random each run.

    ``None`` leaves them open to any request from this machine's address (a benchmark's own).
    """
    public_webhooks: bool = False
    """Whether ``setWebhook`` takes a URL off this machine (updates would leave it)."""

    @property
    def bot_id(self) -> int:
        """The bot's user id: the digits before the colon of its token."""
        return int(self.token.partition(":")[0])
