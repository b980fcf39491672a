"""The test-side client of an emulator's control API.

Tests act as Telegram users through it and read back what the bot did. The
``wait_for_*`` methods wake on the emulator's change signal (a long poll on
``/_emulator/changes``), never by sleeping; their timeout only guards against a
test hanging forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

import aiohttp

from .guard import KEY_HEADER
from .records import (
    CallRecord,
    Toast,
    TranscriptMessage,
    UpdateRecord,
    Violation,
    from_json,
)
from .users import Press

Found = TypeVar("Found")
__all__ = ["EmulatorClient", "EmulatorTimeoutError", "Press"]


class EmulatorTimeoutError(AssertionError):
    """A ``wait_for_*`` condition did not come true in time."""


class EmulatorClient:
    """Drive an emulator from a test: create chats, act as users, read records."""

    def __init__(self, base_url: str, *, key: str | None = None) -> None:
        """``key``: the run's key of the emulator (its ``EmulatorConfig.access_key``)."""
        self.base_url = base_url.rstrip("/")
        self._session = aiohttp.ClientSession(headers={KEY_HEADER: key} if key else None)

    async def __aenter__(self) -> EmulatorClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the HTTP session."""
        await self._session.close()

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        url = f"{self.base_url}/_emulator{path}"
        async with self._session.request(method, url, **kwargs) as response:
            if response.content_type != "application/json":  # refused by the guard, for one
                raise ValueError(f"{method} {path}: {response.status} {await response.text()}")
            body = await response.json()
            if response.status != 200:
                raise ValueError(f"{method} {path}: {body.get('error', body)}")
            return body

    async def bot(self) -> dict[str, Any]:
        """Return ``{"token": ..., "user": {...}}`` of the emulated bot."""
        result: dict[str, Any] = await self._request("GET", "/bot")
        return result

    async def create_user(
        self,
        first_name: str,
        *,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = "en",
    ) -> dict[str, Any]:
        """Create a user and return its Telegram User object (``id`` included)."""
        body = {
            "first_name": first_name,
            "last_name": last_name,
            "username": username,
            "language_code": language_code,
        }
        result: dict[str, Any] = await self._request("POST", "/users", json=body)
        return result

    async def create_chat(
        self,
        chat_type: str,
        *,
        title: str | None = None,
        members: Sequence[int] = (),
        admins: Sequence[int] = (),
        forum: bool = False,
        bot_is_admin: bool = False,
    ) -> dict[str, Any]:
        """Create a chat and return its Chat object.

        ``chat_type`` is ``private`` (``members`` is the one user), ``group`` or
        ``supergroup``; the first admin is the creator. ``forum`` needs a supergroup.
        """
        body = {
            "type": chat_type,
            "title": title,
            "member_ids": list(members),
            "admin_ids": list(admins),
            "is_forum": forum,
            "bot_is_admin": bot_is_admin,
        }
        result: dict[str, Any] = await self._request("POST", "/chats", json=body)
        return result

    async def create_topic(self, chat_id: int, name: str) -> int:
        """Open a topic in a forum supergroup; return its ``message_thread_id``."""
        body = await self._request("POST", f"/chats/{chat_id}/topics", json={"name": name})
        thread_id: int = body["message_thread_id"]
        return thread_id

    async def send_text(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        message_thread_id: int | None = None,
        reply_to: int | None = None,
    ) -> int:
        """A user writes ``text`` in a chat (or topic), maybe replying to message ``reply_to``.

        Return the new message's id.
        """
        body = {
            "user_id": user_id,
            "text": text,
            "message_thread_id": message_thread_id,
            "reply_to_message_id": reply_to,
        }
        result = await self._request("POST", f"/chats/{chat_id}/messages", json=body)
        message_id: int = result["message_id"]
        return message_id

    async def send_command(
        self,
        chat_id: int,
        user_id: int,
        command: str,
        args: str = "",
        *,
        mention_bot: bool = False,
        message_thread_id: int | None = None,
        reply_to: int | None = None,
    ) -> int:
        """A user sends ``/command`` (``/command@botname`` if ``mention_bot``) with ``args``."""
        text = f"/{command.lstrip('/')}"
        if mention_bot:
            text += f"@{(await self.bot())['user']['username']}"
        if args:
            text += f" {args}"
        return await self.send_text(
            chat_id, user_id, text, message_thread_id=message_thread_id, reply_to=reply_to
        )

    async def press(
        self,
        chat_id: int,
        message_id: int,
        user_id: int,
        *,
        data: str | None = None,
        button_text: str | None = None,
        forged: bool = False,
    ) -> str:
        """A user presses a button (by callback data or text); return the callback query id.

        ``forged`` sends ``data`` even if no button carries it, as a modified client could.
        """
        (query_id,) = await self.press_many(
            [Press(chat_id, message_id, user_id, data=data, button_text=button_text, forged=forged)]
        )
        return query_id

    async def press_many(self, presses: Sequence[Press]) -> list[str]:
        """Schedule presses, each at its ``offset`` seconds from now on the emulator's timer."""
        body = {"presses": [vars(press) for press in presses]}
        result = await self._request("POST", "/presses", json=body)
        query_ids: list[str] = result["callback_query_ids"]
        return query_ids

    async def transcript(
        self, chat_id: int, *, include_users: bool = False
    ) -> list[TranscriptMessage]:
        """Every bot message of a chat as it is now (user messages too if asked)."""
        params = {"include_users": str(include_users).lower()}
        items = await self._request("GET", f"/chats/{chat_id}/transcript", params=params)
        return [from_json(TranscriptMessage, item) for item in items]

    async def toasts(self) -> list[Toast]:
        """Every button press so far, with the bot's answer if it gave one."""
        return [from_json(Toast, item) for item in await self._request("GET", "/toasts")]

    async def calls(self, method: str | None = None) -> list[CallRecord]:
        """Every Bot API call the bot made (only ``method``'s, case-insensitive, if given)."""
        calls = [from_json(CallRecord, item) for item in await self._request("GET", "/calls")]
        if method is None:
            return calls
        return [call for call in calls if call.method.lower() == method.lower()]

    async def violations(self) -> list[Violation]:
        """Every 4xx answer the bot brought on itself."""
        return [from_json(Violation, item) for item in await self._request("GET", "/violations")]

    async def updates(self) -> list[UpdateRecord]:
        """Every update produced so far, with each hand-over to the bot."""
        return [from_json(UpdateRecord, item) for item in await self._request("GET", "/updates")]

    async def not_emulated(self) -> list[str]:
        """The methods the bot called that the emulator only answered plausibly."""
        names: list[str] = await self._request("GET", "/not-emulated")
        return names

    async def inject_fault(
        self,
        method: str,
        kind: str,
        *,
        count: int = 1,
        retry_after: int = 1,
        hold: float = 1.0,
        answer_late: bool = False,
    ) -> None:
        """Make the next ``count`` calls of ``method`` fail; see :class:`~.records.Fault`."""
        body = {
            "method": method,
            "kind": kind,
            "count": count,
            "retry_after": retry_after,
            "hold": hold,
            "answer_late": answer_late,
        }
        await self._request("POST", "/faults", json=body)

    async def clear_faults(self) -> None:
        """Cancel every planned fault."""
        await self._request("DELETE", "/faults")

    async def kick_bot(self, chat_id: int) -> None:
        """Kick the bot from a group (block it in a private chat)."""
        await self._request("POST", f"/chats/{chat_id}/kick-bot")

    async def redeliver(self, update_id: int) -> None:
        """Hand update ``update_id`` to the bot again (a redelivery)."""
        await self._request("POST", f"/updates/{update_id}/redeliver")

    async def pause_delivery(self) -> None:
        """Hold back every update not yet handed to the bot."""
        await self._request("POST", "/delivery/pause")

    async def resume_delivery(self) -> None:
        """Release the held-back updates."""
        await self._request("POST", "/delivery/resume")

    async def wait_until_idle(
        self,
        *,
        quiet: float = 0.05,
        timeout: float = 10.0,  # noqa: ASYNC109 (a failure guard, not a timing tool)
    ) -> None:
        """Wait until nothing is under way and the bot has been silent ``quiet`` seconds.

        Nothing under way: every update confirmed, no press scheduled, no call running.
        """
        params = {"quiet": str(quiet), "timeout": str(timeout)}
        if not (await self._request("GET", "/idle", params=params))["idle"]:
            raise EmulatorTimeoutError(f"the emulator was not idle within {timeout} s")

    async def wait_for(
        self,
        probe: Callable[[], Any],
        *,
        timeout: float = 10.0,  # noqa: ASYNC109 (a failure guard, not a timing tool)
        what: str = "condition",
    ) -> Any:
        """Wait until the coroutine function ``probe`` returns something other than ``None``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        version = -1
        while True:
            found = await probe()
            if found is not None:
                return found
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise EmulatorTimeoutError(f"timed out after {timeout} s waiting for {what}")
            params = {"after": str(version), "timeout": str(remaining)}
            version = (await self._request("GET", "/changes", params=params))["version"]

    async def wait_for_message(
        self,
        chat_id: int,
        predicate: Callable[[TranscriptMessage], bool] = lambda message: True,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109 (a failure guard, not a timing tool)
    ) -> TranscriptMessage:
        """Wait for a live bot message of the chat that satisfies ``predicate``; return it."""

        async def probe() -> TranscriptMessage | None:
            for message in await self.transcript(chat_id):
                if not message.deleted and predicate(message):
                    return message
            return None

        found: TranscriptMessage = await self.wait_for(
            probe, timeout=timeout, what=f"a bot message in chat {chat_id}"
        )
        return found

    async def wait_for_toast(
        self,
        predicate: Callable[[Toast], bool] = lambda toast: True,
        *,
        callback_query_id: str | None = None,
        timeout: float = 10.0,  # noqa: ASYNC109 (a failure guard, not a timing tool)
    ) -> Toast:
        """Wait for an answered press (this query's, if given) satisfying ``predicate``."""

        async def probe() -> Toast | None:
            for toast in await self.toasts():
                wanted = callback_query_id in {None, toast.callback_query_id}
                if toast.is_answered and wanted and predicate(toast):
                    return toast
            return None

        found: Toast = await self.wait_for(probe, timeout=timeout, what="an answered press")
        return found

    async def wait_for_call(
        self,
        method: str,
        predicate: Callable[[CallRecord], bool] = lambda call: True,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109 (a failure guard, not a timing tool)
    ) -> CallRecord:
        """Wait for a call of ``method`` (maybe not yet answered) matching ``predicate``."""

        async def probe() -> CallRecord | None:
            return next((call for call in await self.calls(method) if predicate(call)), None)

        found: CallRecord = await self.wait_for(probe, timeout=timeout, what=f"a {method} call")
        return found
