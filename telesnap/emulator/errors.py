"""The errors a Bot API method answers with, as Telegram words them.

Every error is an :class:`ApiError`; the server turns it into
``{"ok": false, "error_code": N, "description": "...", "parameters": {...}}``
with the same HTTP status.

>>> error = bad_request("chat not found")
>>> (error.code, error.description)
(400, 'Bad Request: chat not found')
"""

from __future__ import annotations

from typing import Any

MESSAGE_NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
MESSAGE_TEXT_EMPTY = "message text is empty"
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"


class ApiError(Exception):
    """A Bot API call that Telegram would refuse."""

    def __init__(
        self, code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters or {}

    def to_json(self) -> dict[str, Any]:
        """Return the body Telegram sends for this error."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def bad_request(detail: str) -> ApiError:
    """Return a 400 error with Telegram's ``Bad Request:`` prefix."""
    return ApiError(400, f"Bad Request: {detail}")


def forbidden(detail: str) -> ApiError:
    """Return a 403 error with Telegram's ``Forbidden:`` prefix."""
    return ApiError(403, f"Forbidden: {detail}")


def too_many_requests(retry_after: int) -> ApiError:
    """Return the 429 flood-control error asking to wait ``retry_after`` seconds."""
    return ApiError(
        429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
    )
