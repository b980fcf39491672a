"""Telegram's checks on message text, captions, keyboards and toasts.

>>> render_text("<b>hi</b>", "HTML", None)
('hi', [{'type': 'bold', 'offset': 0, 'length': 2}])
>>> check_reply_markup({"inline_keyboard": [[{"text": "Flip", "callback_data": ""}]]})
Traceback (most recent call last):
...
telesnap.emulator.errors.ApiError: Bad Request: BUTTON_DATA_INVALID
"""

from __future__ import annotations

from typing import Any

from .errors import MESSAGE_TEXT_EMPTY, bad_request
from .formatting import parse_html, utf16_length

MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_TOAST = 200
MAX_BUTTONS = 100
MAX_BUTTONS_PER_ROW = 8
MAX_CALLBACK_DATA_BYTES = 64
BUTTON_ACTIONS = frozenset(
    {
        "url",
        "callback_data",
        "web_app",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    }
)
UNCHECKED_PARSE_MODES = frozenset({"markdown", "markdownv2"})


def render_text(
    text: str, parse_mode: str | None, entities: list[dict[str, Any]] | None
) -> tuple[str, list[dict[str, Any]]]:
    """Return the plain text and entities Telegram shows for ``text``.

    HTML is parsed and validated; Markdown modes are kept as they are (not
    emulated); without a parse mode the explicit ``entities`` are kept.
    """
    mode = (parse_mode or "").lower()
    if mode == "html":
        return parse_html(text)
    if mode in UNCHECKED_PARSE_MODES:
        return text, []
    if mode:
        raise bad_request(f"unsupported parse_mode {parse_mode!r}")
    return text, list(entities or [])


def check_message_text(text: str) -> None:
    """Reject empty text and text over 4096 characters (after entity parsing)."""
    if not text.strip():
        raise bad_request(MESSAGE_TEXT_EMPTY)
    if utf16_length(text) > MAX_TEXT:
        raise bad_request("message is too long")


def check_caption(caption: str) -> None:
    """Reject captions over 1024 characters (after entity parsing)."""
    if utf16_length(caption) > MAX_CAPTION:
        raise bad_request("message caption is too long")


def check_toast(text: str | None) -> None:
    """Reject callback answers over 200 characters."""
    if text is not None and len(text) > MAX_TOAST:
        raise bad_request("MESSAGE_TOO_LONG")


def check_reply_markup(markup: dict[str, Any] | None) -> dict[str, Any] | None:
    """Validate an inline keyboard (other markups pass unchecked) and return it."""
    if markup is None or "inline_keyboard" not in markup:
        return markup
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request(
            "can't parse inline keyboard button: InlineKeyboardButton must be an Object"
        )
    if sum(len(row) for row in rows) > MAX_BUTTONS:
        raise bad_request("reply markup is too long")
    for row in rows:
        if len(row) > MAX_BUTTONS_PER_ROW:
            raise bad_request("too many buttons in a row of the inline keyboard")
        for button in row:
            _check_button(button)
    return markup


def _check_button(button: Any) -> None:
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise bad_request("can't parse inline keyboard button: Text must be a String")
    if not BUTTON_ACTIONS & button.keys():
        raise bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if "callback_data" in button:
        data = button["callback_data"]
        size = len(data.encode("utf-8")) if isinstance(data, str) else 0
        if not 1 <= size <= MAX_CALLBACK_DATA_BYTES:
            raise bad_request("BUTTON_DATA_INVALID")


def find_button(
    markup: dict[str, Any] | None, *, data: str | None = None, text: str | None = None
) -> dict[str, Any] | None:
    """Return the inline button with this ``callback_data`` or this ``text``."""
    for row in (markup or {}).get("inline_keyboard", []):
        for button in row:
            if data is not None and button.get("callback_data") == data:
                return dict(button)
            if text is not None and button.get("text") == text:
                return dict(button)
    return None
