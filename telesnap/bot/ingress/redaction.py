"""Keeping the bot token and the webhook secret out of logs and error texts.

Every Bot API URL holds the token, and aiohttp's errors, python-telegram-bot's DEBUG lines and
tracebacks print it: every log record passes through :func:`redact`, whatever handler writes it.

>>> redact("GET https://api.telegram.org/bot123:AAbb-cc_DD/getMe failed")
'GET https://api.telegram.org/bot123:***/getMe failed'
>>> redact("https://bot.example.com/123456789:AAEhBOweik6ad9r_QXMENQjcrG2vt0o5TZw was refused")
'https://bot.example.com/123456789:*** was refused'
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import quote

__all__ = ["install_token_redaction", "redact"]

_URL_TOKEN = re.compile(r"(/bot)(\d+)(?::|%3A)[^/\s'\"?#]+", re.IGNORECASE)
"""A token in a Bot API URL path: ``/bot<id>:<secret>``, also percent-encoded."""
_BARE_TOKEN = re.compile(r"(?<![\d:])(\d{5,12})(?::|%3A)[A-Za-z0-9_-]{35}(?![\w-])")
"""A token anywhere (a webhook URL's path, a pasted value): ``<id>:<35-character secret>``."""
_known_tokens: set[str] = set()
_known_secrets: set[str] = set()
_lock = threading.Lock()


def _masked(token: str) -> str:
    bot_id, _, _ = token.partition(":")
    return f"{bot_id}:***"


def redact(text: str) -> str:
    """``text`` with every token it holds (in a URL, or one this process runs) masked."""
    text = _URL_TOKEN.sub(lambda match: f"{match[1]}{match[2]}:***", text)
    text = _BARE_TOKEN.sub(lambda match: f"{match[1]}:***", text)
    for secret in tuple(_known_secrets):
        text = text.replace(secret, "***")
    for token in tuple(_known_tokens):
        if token in text:
            text = text.replace(token, _masked(token))
        encoded = quote(token, safe="")
        if encoded != token and encoded in text:
            text = text.replace(encoded, _masked(token))
    return text


class _RedactedRecord(logging.LogRecord):
    """A log record whose message, traceback and stack hold no token."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.exc_info and not self.exc_text:
            self.exc_text = redact(logging.Formatter().formatException(self.exc_info))
        if self.stack_info:
            self.stack_info = redact(self.stack_info)

    def getMessage(self) -> str:  # noqa: N802 (logging's name)
        return redact(super().getMessage())


def install_token_redaction(token: str | None = None, secret: str | None = None) -> None:
    """Mask ``token``, any token in a Bot API URL, and the webhook ``secret`` in every log record.

    At the records' making, so later handlers are covered too; installing again only adds the token.
    """
    with _lock:
        if token:
            _known_tokens.add(token)
        if secret:
            _known_secrets.add(secret)
        if logging.getLogRecordFactory() is not _RedactedRecord:
            logging.setLogRecordFactory(_RedactedRecord)
