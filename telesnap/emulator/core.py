"""The emulator's state and its one entry point for Bot API calls.

:class:`Emulator` validates each call against the Bot API spec, applies planned
faults, runs the method (or answers plausibly when it is not emulated), and
records the call, its answer and any violation. The user side (messages,
button presses, kicks) lives in :mod:`telesnap.emulator.users`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections import defaultdict, deque
from typing import Any

from .changes import ChangeSignal
from .config import EmulatorConfig
from .errors import QUERY_TOO_OLD, ApiError, bad_request
from .files import FileStore
from .flood import FloodControl
from .handlers import HANDLERS, not_emulated_result
from .network import NetworkDelay
from .records import CallRecord, Fault, Toast, Violation
from .spec import ATTACHED, UploadedFile, coerce_params, find_method
from .updates import UpdateHub
from .world import User, World

FAULT_ERRORS = {
    "server_error": ApiError(500, "Internal Server Error"),
    "bad_gateway": ApiError(502, "Bad Gateway"),
    "forbidden": ApiError(403, "Forbidden: bot was blocked by the user"),
}
LONG_POLL_METHODS = frozenset({"getupdates"})


class DropConnectionError(Exception):
    """Raised to make the server close the connection without answering."""


class Emulator:
    """A Telegram Bot API for one bot, with everything it did recorded."""

    def __init__(self, config: EmulatorConfig | None = None) -> None:
        self.config = config or EmulatorConfig()
        self.clock = self.config.clock
        self.bot = User(
            self.config.bot_id,
            self.config.bot_first_name,
            username=self.config.bot_username,
            is_bot=True,
        )
        self.world = World(self.bot, self.clock, self.config.messages_kept_per_chat)
        self.changes = ChangeSignal()
        self.updates = UpdateHub(self.config, self._touch)
        self.flood = FloodControl(self.config.flood, self.clock)
        self.callback_queries: dict[str, Toast] = {}
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.calls: dict[int, CallRecord] = {}
        """The latest ``config.log_limit`` calls by sequence number, oldest first."""
        self.violations: deque[Violation] = deque(maxlen=self.config.log_limit)
        self.refusals: deque[int] = deque(maxlen=1000)
        """The sequence numbers of the latest calls answered 429 (flood limits)."""
        self.refusal_count = 0
        self.files = FileStore(self.config.file_store_bytes)
        self.network: dict[int, NetworkDelay] = {}
        """Each slow user's network delay (users not named here have none)."""
        self.random = random.Random()
        self._next_sequence = 0
        self.faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.not_emulated: set[str] = set()
        self.scheduled: set[asyncio.TimerHandle] = set()
        self.in_flight = 0
        self.last_activity = 0.0

    def _touch(self) -> None:
        self.last_activity = asyncio.get_running_loop().time()
        self.changes.notify()

    async def handle_call(
        self,
        token: str,
        method_name: str,
        raw: dict[str, Any],
        unreadable: ApiError | None = None,
    ) -> dict[str, Any]:
        """Run one Bot API call and return Telegram's answer body (``error_code`` on failure).

        ``unreadable`` is the error of a body that could not be read: the call answers it.
        """
        if token != self.config.token:
            return ApiError(401, "Unauthorized").to_json()
        try:
            method = find_method(method_name)
        except ApiError as error:
            return error.to_json()
        long_poll = method.name.lower() in LONG_POLL_METHODS
        record = self._record_call(method.name, raw)
        self.in_flight += 0 if long_poll else 1
        fault = self._take_fault(method.name)
        body: dict[str, Any] | None = None
        try:
            await self._apply_fault(fault)
            if unreadable is not None:
                raise unreadable
            params = coerce_params(method, raw)
            attached = {k: v for k, v in raw.items() if isinstance(v, UploadedFile)}
            if attached:
                params[ATTACHED] = attached  # for attach:// inside InputMedia
            handler = HANDLERS.get(method.name.lower())
            if handler is None:
                self.not_emulated.add(method.name)
                result = not_emulated_result(self, method, params)
            else:
                result = await handler(self, params)
            body = {"ok": True, "result": result}
        except ApiError as error:
            body = error.to_json()
            caused_by_fault = fault is not None and fault.kind != "timeout"
            if 400 <= error.code < 500 and not caused_by_fault:
                self.violations.append(
                    Violation(
                        record.sequence,
                        method.name,
                        record.params,
                        error.code,
                        error.description,
                        self.clock(),
                    )
                )
        finally:
            self.in_flight -= 0 if long_poll else 1
            self._finish_call(record, fault, body)
        return body

    def _record_call(self, method: str, raw: dict[str, Any]) -> CallRecord:
        record = CallRecord(
            sequence=self._next_sequence,
            method=method,
            params={name: _json_safe(value) for name, value in raw.items()},
            received_at=self.clock(),
            received_wall=time.time(),
            answered_at=None,
            status=None,
            description=None,
            emulated=method.lower() in HANDLERS,
            fault=None,
        )
        self._next_sequence += 1
        self.calls[record.sequence] = record
        while len(self.calls) > self.config.log_limit:
            del self.calls[next(iter(self.calls))]
        self._touch()
        return record

    def _finish_call(
        self, record: CallRecord, fault: Fault | None, body: dict[str, Any] | None
    ) -> None:
        status = 200 if body and body["ok"] else (body or {}).get("error_code")
        if status == 429:
            self.refusals.append(record.sequence)
            self.refusal_count += 1
        if record.sequence not in self.calls:
            return  # forgotten already: a long poll outlived config.log_limit newer calls
        self.calls[record.sequence] = dataclasses.replace(
            record,
            answered_at=self.clock() if body else None,
            status=status,
            description=(body or {}).get("description"),
            fault=fault.kind if fault else None,
        )
        self._touch()

    def _take_fault(self, method: str) -> Fault | None:
        planned = self.faults.get(method.lower())
        if not planned:
            return None
        fault = planned[0]
        if fault.count <= 1:
            planned.popleft()
        else:
            planned[0] = dataclasses.replace(fault, count=fault.count - 1)
        return fault

    @staticmethod
    async def _apply_fault(fault: Fault | None) -> None:
        if fault is None:
            return
        if fault.kind == "retry_after":
            raise ApiError(
                429,
                f"Too Many Requests: retry after {fault.retry_after}",
                {"retry_after": fault.retry_after},
            )
        if fault.kind == "timeout":
            await asyncio.sleep(fault.hold)
            if not fault.answer_late:
                raise DropConnectionError(fault.method)
            return
        raise FAULT_ERRORS[fault.kind]

    def plan_fault(self, fault: Fault) -> None:
        """Make the next ``fault.count`` calls of ``fault.method`` fail as planned."""
        if fault.kind not in {*FAULT_ERRORS, "retry_after", "timeout"}:
            raise ValueError(f"unknown fault kind {fault.kind!r}")
        find_method(fault.method)
        self.faults[fault.method.lower()].append(fault)

    def remember_press(self, query: Toast) -> None:
        """Keep ``query`` until it is answered, forgetting the oldest past ``config.log_limit``."""
        self.callback_queries[query.callback_query_id] = query
        while len(self.callback_queries) > self.config.log_limit:
            del self.callback_queries[next(iter(self.callback_queries))]

    def network_delay(self, user_id: int) -> float:
        """Seconds the next update of ``user_id`` takes to arrive (0 without a slow network)."""
        link = self.network.get(user_id)
        return 0.0 if link is None else link.sample(self.random)

    def answer_callback(self, query_id: str, params: dict[str, Any]) -> None:
        """Record the bot's answer to a press, or refuse it if it is late or repeated."""
        query = self.callback_queries.get(query_id)
        too_late = query is not None and (
            self.clock() - query.pressed_at > self.config.callback_answer_timeout
        )
        if query is None or query.answered_at is not None or too_late:
            raise bad_request(QUERY_TOO_OLD)
        query.text = params.get("text")
        query.show_alert = bool(params.get("show_alert", False))
        query.url = params.get("url")
        query.answered_at = self.clock()
        query.answered_wall = time.time()

    def is_idle(self) -> bool:
        """Whether nothing is under way: no pending update, press or bot call."""
        return not (self.updates.has_unconfirmed or self.scheduled or self.in_flight)

    async def wait_until_idle(self, quiet: float, within: float) -> bool:
        """Wait until :meth:`is_idle` has held, with no bot call, for ``quiet`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            quiet_for = loop.time() - self.last_activity
            if self.is_idle() and quiet_for >= quiet:
                return True
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            wait = min(remaining, quiet - quiet_for) if self.is_idle() else remaining
            await self.changes.wait(max(wait, 0.0))

    async def close(self) -> None:
        """Cancel scheduled presses and stop every update delivery."""
        for handle in self.scheduled:
            handle.cancel()
        self.scheduled.clear()
        await self.updates.close()


def _json_safe(value: Any) -> Any:
    if isinstance(value, UploadedFile):
        return {
            "file_name": value.file_name,
            "size": value.size,
            "content_type": value.content_type,
        }
    return value
