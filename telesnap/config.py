"""Settings loaded from the environment and an optional ``.env`` file.

Every setting is a ``TELESNAP_*`` variable; the real environment wins over the
``.env`` file. A missing or malformed setting raises :class:`ConfigError`,
whose message is one line naming the variable and what it accepts.

>>> settings = load_settings({"TELESNAP_TOKEN": "123:hidden"}, env_file=None)
>>> settings.database_url
'sqlite+aiosqlite:///telesnap.db'
>>> "hidden" in repr(settings)
False
"""

from __future__ import annotations

import logging
import os
import re
import socket
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from dotenv import dotenv_values

__all__ = [
    "DEFAULT_API_URL",
    "DEFAULT_DATABASE_URL",
    "ConfigError",
    "PoolSettings",
    "Settings",
    "check_webhook_secret",
    "default_host_id",
    "load_settings",
    "mask_password",
    "normalize_database_url",
    "read_webhook_secret",
    "settings_warnings",
]

TOKEN_VARIABLE = "TELESNAP_TOKEN"
API_URL_VARIABLE = "TELESNAP_API_URL"
DATABASE_URL_VARIABLE = "TELESNAP_DATABASE_URL"
LOG_LEVEL_VARIABLE = "TELESNAP_LOG_LEVEL"
SHUFFLE_SEED_VARIABLE = "TELESNAP_SHUFFLE_SEED"
FLOOD_CONTROL_VARIABLE = "TELESNAP_FLOOD_CONTROL"
SANDBOX_PORT_VARIABLE = "TELESNAP_SANDBOX_PORT"
HOST_ID_VARIABLE = "TELESNAP_HOST_ID"
POOL_SIZE_VARIABLE = "TELESNAP_DB_POOL_SIZE"
MAX_OVERFLOW_VARIABLE = "TELESNAP_DB_MAX_OVERFLOW"
POOL_TIMEOUT_VARIABLE = "TELESNAP_DB_POOL_TIMEOUT"
CONNECT_TIMEOUT_VARIABLE = "TELESNAP_DB_CONNECT_TIMEOUT"
WEBHOOK_SECRET_VARIABLE = "TELESNAP_WEBHOOK_SECRET"
WEBHOOK_SECRET_FILE_VARIABLE = "TELESNAP_WEBHOOK_SECRET_FILE"
WEBHOOK_SECRET_MIN_LENGTH = 32
"""A webhook secret shorter than this is refused: it is all that tells Telegram's POSTs
from anyone else's."""

DEFAULT_API_URL = "https://api.telegram.org"
DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///telesnap.db"
DEFAULT_LOG_LEVEL = "INFO"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# Each accepted URL scheme and the async driver scheme it becomes.
_DATABASE_SCHEMES = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}
_TOKEN_PATTERN = re.compile(r"\d+:\S+")
_HOST_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_WEBHOOK_SECRET_PATTERN = re.compile(rf"[A-Za-z0-9_-]{{{WEBHOOK_SECRET_MIN_LENGTH},256}}")
_HTTP_URL_PATTERN = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?", re.IGNORECASE)


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


KEPT_CONNECTIONS = 2
"""Connections a worker on PostgreSQL keeps out of its pool for its life: the inbox's
claims and LISTEN (``storage/claims.py``), and its liveness lock (``storage/liveness.py``)."""


@dataclass(frozen=True)
class PoolSettings:
    """The PostgreSQL connection pool of one worker (SQLite always uses one connection).

    A worker opens at most ``size + max_overflow`` connections, and keeps
    :data:`KEPT_CONNECTIONS` of them for its life.
    """

    size: int = 10
    """Connections kept open in the pool (``TELESNAP_DB_POOL_SIZE``)."""
    max_overflow: int = 10
    """Connections opened beyond ``size`` under load, closed when returned
    (``TELESNAP_DB_MAX_OVERFLOW``)."""
    timeout_s: float = 30.0
    """How long a transaction waits for a free connection before it fails
    (``TELESNAP_DB_POOL_TIMEOUT``, seconds)."""
    connect_timeout_s: float = 10.0
    """How long opening one connection to PostgreSQL may take
    (``TELESNAP_DB_CONNECT_TIMEOUT``, seconds)."""

    @property
    def most_connections(self) -> int:
        """The most connections this worker opens to PostgreSQL at once."""
        return self.size + self.max_overflow


@dataclass(frozen=True)
class Settings:
    """Everything the bot reads from its environment.

    The token never appears in ``repr`` or ``str``: only its bot id does.

    >>> Settings(token="42:abc", api_url=DEFAULT_API_URL, database_url=DEFAULT_DATABASE_URL)
    Settings(token='42:***', api_url='https://api.telegram.org', \
database_url='sqlite+aiosqlite:///telesnap.db', log_level='INFO', shuffle_seed=None, \
flood_control=True, sandbox_port=None, host_id='', pool=PoolSettings(size=10, \
max_overflow=10, timeout_s=30.0, connect_timeout_s=10.0), webhook_secret=None)
    """

    token: str | None
    api_url: str = DEFAULT_API_URL
    database_url: str = DEFAULT_DATABASE_URL
    log_level: str = DEFAULT_LOG_LEVEL
    shuffle_seed: int | None = None
    """Pins every game's shuffle and dealer (tests, demonstrations); None: a fresh seed."""
    flood_control: bool = True
    """Keep within Telegram's flood limits (off only against the emulator or a test server)."""
    sandbox_port: int | None = None
    """The port of ``telesnap sandbox``'s page when ``--port`` is not given (None: its default)."""
    host_id: str = ""
    """Which host stamps the updates this process receives, stored beside each stamp
    (``TELESNAP_HOST_ID``; by default the machine's hostname, see :func:`default_host_id`)."""
    pool: PoolSettings = PoolSettings()
    """The database connection pool (PostgreSQL)."""
    webhook_secret: str | None = None
    """The secret Telegram sends with every webhook POST (``TELESNAP_WEBHOOK_SECRET``, or
    the file ``TELESNAP_WEBHOOK_SECRET_FILE`` names); None: none given."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What is risky in these settings (logged at start): see :func:`settings_warnings`."""

    @property
    def masked_token(self) -> str | None:
        """The token with its secret part replaced by ``***`` (safe to log).

        >>> Settings(token="42:abc").masked_token
        '42:***'
        """
        if self.token is None:
            return None
        bot_id, _, _ = self.token.partition(":")
        return f"{bot_id}:***"

    @property
    def log_level_number(self) -> int:
        """The log level as a :mod:`logging` number.

        >>> Settings(token=None, log_level="DEBUG").log_level_number
        10
        """
        return logging.getLevelNamesMapping()[self.log_level]

    def __repr__(self) -> str:
        return (
            f"Settings(token={self.masked_token!r}, api_url={self.api_url!r}, "
            f"database_url={mask_password(self.database_url)!r}, log_level={self.log_level!r}, "
            f"shuffle_seed={self.shuffle_seed!r}, flood_control={self.flood_control!r}, "
            f"sandbox_port={self.sandbox_port!r}, host_id={self.host_id!r}, pool={self.pool!r}, "
            f"webhook_secret={'***' if self.webhook_secret else None!r})"
        )

    __str__ = __repr__


def normalize_database_url(url: str, variable: str = DATABASE_URL_VARIABLE) -> str:
    """Return ``url`` with its scheme mapped to the async driver telesnap uses.

    >>> normalize_database_url("sqlite:///games.db")
    'sqlite+aiosqlite:///games.db'
    >>> normalize_database_url("postgresql://bot@db/snap")
    'postgresql+asyncpg://bot@db/snap'
    """
    scheme, separator, rest = url.strip().partition("://")
    driver = _DATABASE_SCHEMES.get(scheme.lower())
    if not separator or driver is None:
        raise ConfigError(
            f"{variable} must be a database URL starting with sqlite+aiosqlite://, "
            f"postgresql+asyncpg://, sqlite:// or postgresql://, "
            + (f"got scheme {_shorten(scheme)!r}" if separator else "got no scheme")
        )
    if driver == "sqlite+aiosqlite" and not rest.startswith("/"):
        raise ConfigError(
            f"{variable} for SQLite must look like sqlite+aiosqlite:///path/to/file.db"
        )
    if driver == "postgresql+asyncpg" and not rest.split("/", 1)[0]:
        raise ConfigError(
            f"{variable} for PostgreSQL must name a host, like postgresql+asyncpg://user@host/db"
        )
    return f"{driver}://{rest}"


def load_settings(
    environ: Mapping[str, str] | None = None,
    env_file: Path | None = Path(".env"),
    require_token: bool = True,
    defaults: Mapping[str, str] | None = None,
) -> Settings:
    """Read the settings from ``environ`` (default: the process environment) and ``env_file``.

    Values in ``environ`` win over the ones in ``env_file``; a missing file is
    fine. ``require_token=False`` is for commands that never talk to Telegram,
    such as ``telesnap db upgrade``. ``defaults`` are a command's own defaults
    (the sandbox logs only warnings unless told otherwise); the file and the
    environment win over them.

    >>> load_settings({"TELESNAP_API_URL": "http://127.0.0.1:8081/"}, None, False).api_url
    'http://127.0.0.1:8081'
    >>> load_settings({}, None)
    Traceback (most recent call last):
    ...
    telesnap.config.ConfigError: TELESNAP_TOKEN is not set: it must be the bot token ...
    """
    values = dict(defaults or {})
    values.update(_read_env_file(env_file))
    values.update(os.environ if environ is None else environ)
    settings = Settings(
        token=_parse_token(values.get(TOKEN_VARIABLE), require_token),
        api_url=_parse_api_url(values.get(API_URL_VARIABLE)),
        database_url=_parse_database_url(values.get(DATABASE_URL_VARIABLE)),
        log_level=_parse_log_level(values.get(LOG_LEVEL_VARIABLE)),
        shuffle_seed=_parse_shuffle_seed(values.get(SHUFFLE_SEED_VARIABLE)),
        flood_control=_parse_flood_control(values.get(FLOOD_CONTROL_VARIABLE)),
        sandbox_port=_parse_port(values.get(SANDBOX_PORT_VARIABLE), SANDBOX_PORT_VARIABLE),
        host_id=_parse_host_id(values.get(HOST_ID_VARIABLE)),
        pool=_parse_pool(values),
        webhook_secret=_parse_webhook_secret(values),
    )
    return replace(settings, warnings=settings_warnings(settings, env_file))


def mask_password(url: str) -> str:
    """``url`` with the password it holds replaced by ``***`` (safe to log).

    >>> mask_password("postgresql+asyncpg://bot:s3cret@db/snap")
    'postgresql+asyncpg://bot:***@db/snap'
    """
    return re.sub(r"^([^:/]+://[^:/@]*):[^@]*@", r"\1:***@", url)


_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _is_loopback_host(host: str) -> bool:
    return host in _LOOPBACK_NAMES or host.startswith("127.") or host.endswith(".localhost")


def settings_warnings(settings: Settings, env_file: Path | None) -> tuple[str, ...]:
    """What is risky in ``settings``, each as a line to log at start.

    - a ``.env`` file that others on the machine can read (it holds the token);
    - a plain-HTTP Bot API URL to another machine (the token travels in clear);
    - flood control off, or a fixed shuffle seed, against Telegram's own API
      (Telegram then limits the bot; anyone can foresee every deal).
    """
    found = []
    if env_file is not None and env_file.is_file():
        mode = env_file.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            found.append(
                f"{env_file} can be read by other users (mode {stat.filemode(mode)}) and holds"
                f" the token: chmod 600 {env_file}"
            )
    parts = urlsplit(settings.api_url)
    host = (parts.hostname or "").lower()
    if parts.scheme.lower() == "http" and not _is_loopback_host(host):
        found.append(
            f"{API_URL_VARIABLE} is plain http:// to {host}: the token travels unencrypted;"
            " use https://"
        )
    if settings.api_url == DEFAULT_API_URL:
        if not settings.flood_control:
            found.append(
                f"{FLOOD_CONTROL_VARIABLE} is off against Telegram's own API: Telegram will"
                " throttle or block the bot"
            )
        if settings.shuffle_seed is not None:
            found.append(
                f"{SHUFFLE_SEED_VARIABLE} is set against Telegram's own API: every game deals"
                " the same cards, which players can foresee"
            )
    return tuple(found)


def _read_env_file(env_file: Path | None) -> dict[str, str]:
    if env_file is None or not env_file.is_file():
        return {}
    return {key: value for key, value in dotenv_values(env_file).items() if value is not None}


def _is_blank(value: str | None) -> bool:
    return value is None or not value.strip()


def _parse_token(value: str | None, required: bool) -> str | None:
    if _is_blank(value):
        if required:
            raise ConfigError(
                f"{TOKEN_VARIABLE} is not set: it must be the bot token from @BotFather, "
                "like 123456:ABC-DEF"
            )
        return None
    assert value is not None
    token = value.strip()
    if not _TOKEN_PATTERN.fullmatch(token):
        raise ConfigError(
            f"{TOKEN_VARIABLE} is malformed: it must be the bot token from @BotFather, "
            "like 123456:ABC-DEF (digits, a colon, then no spaces)"
        )
    return token


def _parse_api_url(value: str | None) -> str:
    if _is_blank(value):
        return DEFAULT_API_URL
    assert value is not None
    url = value.strip().rstrip("/")
    if not _HTTP_URL_PATTERN.fullmatch(url):
        raise ConfigError(
            f"{API_URL_VARIABLE} must be an http:// or https:// URL of a Bot API server, "
            f"like {DEFAULT_API_URL}, got {_shorten(value)!r}"
        )
    return url


def _parse_database_url(value: str | None) -> str:
    if _is_blank(value):
        return DEFAULT_DATABASE_URL
    assert value is not None
    return normalize_database_url(value)


def _parse_log_level(value: str | None) -> str:
    if _is_blank(value):
        return DEFAULT_LOG_LEVEL
    assert value is not None
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise ConfigError(
            f"{LOG_LEVEL_VARIABLE} must be one of {', '.join(LOG_LEVELS)}, got {_shorten(value)!r}"
        )
    return level


def _parse_shuffle_seed(value: str | None) -> int | None:
    if _is_blank(value):
        return None
    assert value is not None
    try:
        return int(value.strip())
    except ValueError:
        raise ConfigError(
            f"{SHUFFLE_SEED_VARIABLE} must be a whole number, got {_shorten(value)!r}"
        ) from None


def _parse_flood_control(value: str | None) -> bool:
    if _is_blank(value):
        return True
    assert value is not None
    text = value.strip().lower()
    if text not in ("on", "off"):
        raise ConfigError(f"{FLOOD_CONTROL_VARIABLE} must be on or off, got {_shorten(value)!r}")
    return text == "on"


def _parse_port(value: str | None, variable: str) -> int | None:
    if _is_blank(value):
        return None
    assert value is not None
    text = value.strip()
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise ConfigError(f"{variable} must be a port number, not {_shorten(value)!r}")
    return int(text)


def _parse_pool(values: Mapping[str, str]) -> PoolSettings:
    defaults = PoolSettings()
    pool = PoolSettings(
        size=_parse_count(values.get(POOL_SIZE_VARIABLE), POOL_SIZE_VARIABLE, defaults.size, 1),
        max_overflow=_parse_count(
            values.get(MAX_OVERFLOW_VARIABLE), MAX_OVERFLOW_VARIABLE, defaults.max_overflow, 0
        ),
        timeout_s=_parse_seconds(
            values.get(POOL_TIMEOUT_VARIABLE), POOL_TIMEOUT_VARIABLE, defaults.timeout_s
        ),
        connect_timeout_s=_parse_seconds(
            values.get(CONNECT_TIMEOUT_VARIABLE),
            CONNECT_TIMEOUT_VARIABLE,
            defaults.connect_timeout_s,
        ),
    )
    if pool.most_connections <= KEPT_CONNECTIONS:
        raise ConfigError(
            f"{POOL_SIZE_VARIABLE} + {MAX_OVERFLOW_VARIABLE} is {pool.most_connections}: it must"
            f" be at least {KEPT_CONNECTIONS + 1} ({KEPT_CONNECTIONS} connections are kept for"
            " the inbox's claims and the liveness lock, and transactions need one more)"
        )
    return pool


def _parse_count(value: str | None, variable: str, default: int, least: int) -> int:
    if _is_blank(value):
        return default
    assert value is not None
    text = value.strip()
    if not text.isdigit() or int(text) < least:
        raise ConfigError(
            f"{variable} must be a whole number of at least {least}, got {_shorten(value)!r}"
        )
    return int(text)


def _parse_seconds(value: str | None, variable: str, default: float) -> float:
    if _is_blank(value):
        return default
    assert value is not None
    try:
        seconds = float(value.strip())
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 3600:  # also refuses nan and inf
        raise ConfigError(
            f"{variable} must be a number of seconds above 0 and at most 3600,"
            f" got {_shorten(value)!r}"
        )
    return seconds


def _parse_webhook_secret(values: Mapping[str, str]) -> str | None:
    given = values.get(WEBHOOK_SECRET_VARIABLE)
    path = values.get(WEBHOOK_SECRET_FILE_VARIABLE)
    if not _is_blank(given) and not _is_blank(path):
        raise ConfigError(
            f"{WEBHOOK_SECRET_VARIABLE} and {WEBHOOK_SECRET_FILE_VARIABLE} are both set: give one"
        )
    if not _is_blank(path):
        assert path is not None
        return read_webhook_secret(Path(path.strip()), WEBHOOK_SECRET_FILE_VARIABLE)
    if _is_blank(given):
        return None
    assert given is not None
    return check_webhook_secret(given.strip(), WEBHOOK_SECRET_VARIABLE)


def read_webhook_secret(path: Path, source: str) -> str:
    """The webhook secret kept in the file at ``path`` (one line), checked.

    ``source`` names where the path came from, for the error message.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: {str(path)!r} is not a text file") from None
    except OSError as error:
        reason = error.strerror or error
        raise ConfigError(f"{source}: cannot read the secret in {str(path)!r}: {reason}") from None
    return check_webhook_secret(text.strip(), f"the webhook secret in {str(path)!r} ({source})")


def check_webhook_secret(secret: str, source: str) -> str:
    """``secret`` if it is long enough and uses only what Telegram accepts, else ConfigError.

    >>> check_webhook_secret("short", "TELESNAP_WEBHOOK_SECRET")
    Traceback (most recent call last):
    ...
    telesnap.config.ConfigError: TELESNAP_WEBHOOK_SECRET has 5 characters: it must have ...
    """
    if len(secret) < WEBHOOK_SECRET_MIN_LENGTH:
        raise ConfigError(
            f"{source} has {len(secret)} characters: it must have at least"
            f" {WEBHOOK_SECRET_MIN_LENGTH} (make one with: openssl rand -hex 32)"
        )
    if not _WEBHOOK_SECRET_PATTERN.fullmatch(secret):
        raise ConfigError(
            f"{source} must be at most 256 of A-Z a-z 0-9 _ - (what Telegram accepts)"
        )
    return secret


def default_host_id() -> str:
    """The hostname of the machine, cut to what a host id holds (``"host"`` if it has none)."""
    cleaned = re.sub(r"[^A-Za-z0-9._:-]", "-", socket.gethostname())[:64]
    return cleaned or "host"


def _parse_host_id(value: str | None) -> str:
    if _is_blank(value):
        return default_host_id()
    assert value is not None
    value = value.strip()
    if not _HOST_ID_PATTERN.fullmatch(value):
        raise ConfigError(
            f"{HOST_ID_VARIABLE} is {_shorten(value)!r}: it must be 1 to 64 letters, digits"
            " or . _ : -"
        )
    return value


def _shorten(text: str, limit: int = 60) -> str:
    """Keep error messages on one short line even for odd input."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
