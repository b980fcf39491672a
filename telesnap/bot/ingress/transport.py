"""A python-telegram-bot request backend on aiohttp.

The default backend, on httpx, costs about a millisecond of CPU per call, and the bot makes two
calls per press; aiohttp does the same for a fraction of that. Timeouts and errors map to
python-telegram-bot's own as the httpx backend's do, with the token masked.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from .redaction import redact

_ODVInput = Any  # python-telegram-bot's "value or DEFAULT_NONE" parameters


class AiohttpRequest(BaseRequest):
    """Sends the Bot API calls of one python-telegram-bot ``Bot`` with aiohttp."""

    def __init__(
        self,
        *,
        connection_pool_size: int = 64,
        read_timeout: float | None = 15.0,
        write_timeout: float | None = 15.0,
        connect_timeout: float | None = 10.0,
        pool_timeout: float | None = 10.0,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        """The read timeout used when a call does not give one."""
        return self._read_timeout

    async def initialize(self) -> None:
        """Open the connection pool."""
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size)
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.USER_AGENT}
            )

    async def shutdown(self) -> None:
        """Close the connection pool."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    def _seconds(self, given: _ODVInput, default: float | None) -> float | None:
        return default if isinstance(given, type(BaseRequest.DEFAULT_NONE)) else given

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: _ODVInput = BaseRequest.DEFAULT_NONE,
        write_timeout: _ODVInput = BaseRequest.DEFAULT_NONE,
        connect_timeout: _ODVInput = BaseRequest.DEFAULT_NONE,
        pool_timeout: _ODVInput = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Make one call; return the HTTP status and the body."""
        if self._session is None:
            raise RuntimeError("AiohttpRequest is not initialized")
        read = self._seconds(read_timeout, self._read_timeout)
        write = self._seconds(write_timeout, self._write_timeout)
        connect = self._seconds(connect_timeout, self._connect_timeout)
        pool = self._seconds(pool_timeout, self._pool_timeout)
        # aiohttp has no separate write timeout: the whole call may take read + write.
        total = None if read is None or write is None else read + write
        timeout = aiohttp.ClientTimeout(
            total=total, connect=pool, sock_connect=connect, sock_read=read
        )
        try:
            async with self._session.request(
                method, url, data=_body(request_data), timeout=timeout
            ) as response:
                return response.status, await response.read()
        except TimeoutError as error:
            raise TimedOut from error
        except aiohttp.ClientError as error:
            # aiohttp's text holds the URL, and so the token.
            raise NetworkError(redact(f"aiohttp.{type(error).__name__}: {error}")) from error


def _body(request_data: RequestData | None) -> aiohttp.FormData | dict[str, str] | None:
    """The call's parameters: form fields, or a multipart form when files are uploaded."""
    if request_data is None:
        return None
    fields = request_data.json_parameters
    files = request_data.multipart_data
    if not files:
        return fields
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, (file_name, content, mime_type) in files.items():
        form.add_field(name, content, filename=file_name, content_type=mime_type)
    return form
