"""The bot token never reaches a log line: not python-telegram-bot's, not a traceback's."""

from __future__ import annotations

import logging

import pytest

from telesnap.app import BotRunner, Webhook
from telesnap.bot.ingress.application import build_application
from telesnap.config import Settings

TOKEN = "987654:ZZsecret-part-of-another-token-01234"


def test_building_the_bot_at_debug_logs_no_token(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        build_application(TOKEN, "http://127.0.0.1:1")
    lines = [record.getMessage() for record in caplog.records]
    assert "Set Bot API URL: http://127.0.0.1:1/bot987654:***" in lines
    assert "ZZsecret" not in caplog.text


def test_a_logged_failure_masks_the_token_in_its_message_and_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    build_application(TOKEN, "http://127.0.0.1:1")
    logger = logging.getLogger("telesnap.test")
    with caplog.at_level(logging.ERROR):
        try:
            raise RuntimeError(f"the call with {TOKEN} failed")
        except RuntimeError:
            logger.exception("sending with %s", TOKEN)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    written = handler.format(caplog.records[0])
    assert written.startswith("sending with 987654:***")
    assert "RuntimeError: the call with 987654:*** failed" in written
    assert "ZZsecret" not in written
    assert "ZZsecret" not in caplog.text


def test_a_webhook_bots_secret_is_masked_in_every_log_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "WebhookSecret_" + "s" * 30
    BotRunner(
        Settings(token=TOKEN),
        webhook=Webhook("https://example.org/hook", "127.0.0.1", 8443, secret),
    )
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("telegram.ext.ExtBot").debug(
            "Calling Bot API endpoint `setWebhook` with parameters `%s`", {"secret_token": secret}
        )
    assert "WebhookSecret_" not in caplog.text
    assert "'secret_token': '***'" in caplog.text
