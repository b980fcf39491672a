"""Call the emulator's Bot API directly over HTTP, the way any client could."""

from __future__ import annotations

from typing import Any

import aiohttp

from telesnap.emulator.testing import RunningEmulator


class RawBotApi:
    """Make Bot API calls and return ``(http_status, body)``."""

    def __init__(self, running: RunningEmulator) -> None:
        self.base = f"{running.base_url}{running.token}"
        self.session = aiohttp.ClientSession()

    async def call(self, method: str, **params: Any) -> tuple[int, dict[str, Any]]:
        """POST ``params`` as a JSON body."""
        async with self.session.post(f"{self.base}/{method}", json=params) as response:
            return response.status, await response.json()

    async def ok(self, method: str, **params: Any) -> Any:
        """Call and return the result, failing the test on an error answer."""
        status, body = await self.call(method, **params)
        assert status == 200, body
        return body["result"]

    async def error(self, method: str, **params: Any) -> tuple[int, str]:
        """Call expecting an error; return its code and description."""
        status, body = await self.call(method, **params)
        assert body["ok"] is False, body
        assert status == body["error_code"]
        return status, body["description"]

    async def get(self, url: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        """GET ``url`` (relative to the bot's base URL)."""
        async with self.session.get(f"{self.base}{url}", **kwargs) as response:
            return response.status, await response.json()

    async def post(self, url: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        """POST to ``url`` (relative to the bot's base URL) with aiohttp's ``kwargs``."""
        async with self.session.post(f"{self.base}{url}", **kwargs) as response:
            return response.status, await response.json()
