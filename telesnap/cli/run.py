"""``telesnap run`` and ``telesnap db upgrade``: the bot, and its database's migrations.

These bodies read the :class:`~telesnap.config.Settings`, check the webhook options and hand
both to :class:`~telesnap.app.BotRunner`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path
from urllib.parse import urlsplit

from ..app import BotRunner, Webhook
from ..bot.ingress.redaction import install_token_redaction
from ..config import (
    WEBHOOK_SECRET_VARIABLE,
    ConfigError,
    Settings,
    load_settings,
    read_webhook_secret,
)
from ..storage.migrate import upgrade_database
from .workers import Supervisor, worker_specs

__all__ = ["check_workers", "run_command", "upgrade_command", "webhook_from"]

logger = logging.getLogger("telesnap.config")
DEFAULT_LISTEN = "127.0.0.1:8443"


def _configure_logging(settings: Settings) -> None:
    install_token_redaction(settings.token)  # every record, before anything logs
    logging.basicConfig(  # the process id tells the workers of one supervisor apart
        level=settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s[%(process)d]: %(message)s",
    )
    # httpx logs every request URL, and those URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # Its one error, an answer that is not JSON, with a traceback: the error it then raises
    # says it again, in one line (app.py stops at start on it, or retries a 5xx).
    logging.getLogger("telegram.request.BaseRequest").setLevel(logging.CRITICAL)


def webhook_from(args: argparse.Namespace, settings: Settings) -> Webhook | None:
    """The webhook ``--webhook-url`` and ``--listen`` ask for (None: polling).

    Its secret comes from a file or the settings, never from the command line, where ``ps``
    shows it to everyone on the machine.
    """
    secret_file = args.webhook_secret_file
    if args.webhook_url is None:
        if secret_file:
            raise ConfigError("--webhook-secret-file needs --webhook-url")
        if args.listen is not None:
            raise ConfigError("--listen needs --webhook-url (long polling listens nowhere)")
        return None
    if not _has_host(args.webhook_url):
        raise ConfigError(
            f"--webhook-url must be an http(s) URL with a host, not {args.webhook_url!r}"
        )
    if secret_file and settings.webhook_secret:
        raise ConfigError(
            f"--webhook-secret-file and {WEBHOOK_SECRET_VARIABLE} (or its _FILE) are both given:"
            " give one"
        )
    if secret_file:
        secret = read_webhook_secret(Path(secret_file), "--webhook-secret-file")
    elif settings.webhook_secret:
        secret = settings.webhook_secret
    else:
        raise ConfigError(
            f"--webhook-url needs a secret: set {WEBHOOK_SECRET_VARIABLE}, or give"
            " --webhook-secret-file PATH (at least 32 of A-Z a-z 0-9 _ -)"
        )
    host, _, port = (args.listen or DEFAULT_LISTEN).rpartition(":")  # checked by the parser
    return Webhook(args.webhook_url, host, int(port), secret)


def _has_host(url: str) -> bool:
    """Whether ``url`` is http(s) with a host (and, if any, a port from 1 to 65535)."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("https", "http") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is no number or above 65535, a "[" left open
        return False


def check_workers(settings: Settings, webhook: Webhook | None, workers: int) -> None:
    """Refuse ``--workers`` without a webhook, or several workers on SQLite."""
    if webhook is None:
        raise ConfigError("--workers needs --webhook-url: workers share Telegram's POSTs")
    if workers > 1 and settings.database_url.startswith("sqlite"):
        raise ConfigError(
            "--workers above 1 needs PostgreSQL (TELESNAP_DATABASE_URL): SQLite serves one process"
        )
    if webhook.port + workers - 1 > 65535:
        raise ConfigError(f"--listen's port {webhook.port} leaves no room for {workers} workers")


def run_command(args: argparse.Namespace) -> int:
    """``telesnap run``: run the bot until interrupted."""
    settings = load_settings()
    webhook = webhook_from(args, settings)
    _configure_logging(settings)
    for warning in settings.warnings:
        logger.warning("%s", warning)
    if args.workers is not None:
        check_workers(settings, webhook, args.workers)
        assert webhook is not None
        asyncio.run(upgrade_database(settings.database_url, pool=settings.pool))  # once, first
        specs = worker_specs(webhook, args.workers, resume=not args.no_resume)
        return 0 if asyncio.run(Supervisor(specs).run()) else 1
    runner = BotRunner(settings, webhook=webhook, resume=not args.no_resume)
    asyncio.run(runner.run_until_stopped())
    return 0


def upgrade_command(args: argparse.Namespace) -> int:
    """``telesnap db upgrade``: apply every migration."""
    settings = load_settings(require_token=False)
    asyncio.run(upgrade_database(settings.database_url, pool=settings.pool))
    print(f"telesnap: the database is up to date ({settings.database_url.split('://')[0]})")
    return 0
