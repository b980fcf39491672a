"""Settings loaded from the environment and an optional ``.env`` file.

The real environment wins over the ``.env`` file, and a blank value counts as unset. A
malformed setting raises :class:`ConfigError`: one line naming the variable and what it
accepts, never the value of a secret.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import socket
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from dotenv import dotenv_values
from dotenv.parser import parse_stream  # not python-dotenv's documented API: see _read_env_file

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

TOKEN_VARIABLE = "TELESNAP_TOKEN"
DATABASE_URL_VARIABLE = "TELESNAP_DATABASE_URL"
LOG_LEVEL_VARIABLE = "TELESNAP_LOG_LEVEL"
SANDBOX_PORT_VARIABLE = "TELESNAP_SANDBOX_PORT"
WEBHOOK_SECRET_VARIABLE = "TELESNAP_WEBHOOK_SECRET"
WEBHOOK_SECRET_FILE_VARIABLE = "TELESNAP_WEBHOOK_SECRET_FILE"
DEFAULT_API_URL = "https://api.telegram.org"
DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///telesnap.db"
KEPT_CONNECTIONS = 1
"""Connections a worker on PostgreSQL keeps out of its pool for its life: its coordination
connection (claims, leases, pledges, liveness and LISTEN: ``coordination/postgres.py``)."""
_DATABASE_URL = re.compile(
    r"sqlite(?:\+aiosqlite)?://(/.*)|postgres(?:ql)?(?:\+asyncpg)?://([^/].*)", re.IGNORECASE
)
"""A SQLite URL holds a path (``sqlite:///file.db``), a PostgreSQL URL a host."""


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


class TokenRevokedError(ConfigError):
    """The Bot API refused the token while the bot ran: revoked or replaced since it started.

    It has an exit code of its own: a supervisor restarting a worker that exits with it would
    start a bot that can do nothing, whichever restart it is.
    """

    exit_code = 3


def default_host_id() -> str:
    """The hostname of the machine, cut to what a host id holds (``"host"`` if it has none)."""
    return re.sub(r"[^A-Za-z0-9._:-]", "-", socket.gethostname())[:64] or "host"


@dataclass(frozen=True)
class PoolSettings:
    """The PostgreSQL connection pool of one worker (SQLite always uses one connection).

    At most ``size + max_overflow`` connections, :data:`KEPT_CONNECTIONS` of them kept for life.
    """

    size: int = 10
    max_overflow: int = 10
    """Connections opened beyond ``size`` under load, closed when returned."""
    timeout_s: float = 30.0
    """How long a transaction waits for a free connection before it fails."""
    connect_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if (most := self.size + self.max_overflow) <= KEPT_CONNECTIONS:
            raise ConfigError(
                f"TELESNAP_DB_POOL_SIZE + TELESNAP_DB_MAX_OVERFLOW is {most}: it must be at least"
                f" {KEPT_CONNECTIONS + 1} (one connection is kept for the coordination of the"
                " workers, and transactions need one more)"
            )


@dataclass(frozen=True)
class Settings:
    """Everything the bot reads from its environment; ``repr`` shows no secret in it."""

    token: str | None = None
    api_url: str = DEFAULT_API_URL
    database_url: str = DEFAULT_DATABASE_URL
    log_level: str = "INFO"
    shuffle_seed: int | None = None
    """Pins every game's shuffle and dealer (tests, demonstrations); None: a fresh seed."""
    flood_control: bool = True
    sandbox_port: int | None = None
    """None: ``telesnap sandbox``'s own default port."""
    host_id: str = field(default_factory=default_host_id)
    """Which host stamps the updates this process receives, stored beside each stamp."""
    pool: PoolSettings = PoolSettings()
    webhook_secret: str | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """What is risky in these settings, each a line to log at start."""

    def __repr__(self) -> str:
        shown = {item.name: getattr(self, item.name) for item in fields(self) if item.repr}
        shown["token"] = None if self.token is None else self.token.partition(":")[0] + ":***"
        shown["database_url"] = mask_password(self.database_url)
        shown["webhook_secret"] = "***" if self.webhook_secret else None
        return f"Settings({', '.join(f'{name}={value!r}' for name, value in shown.items())})"


def normalize_database_url(url: str, variable: str = DATABASE_URL_VARIABLE) -> str:
    """Return ``url`` with its scheme mapped to the async driver telesnap uses.

    A SQLite URL must name a file; a PostgreSQL URL a host, any port from 1 to 65535, and no
    query but libpq's ``sslmode``, passed on as asyncpg's ``ssl`` (which takes the same modes).
    """
    from sqlalchemy.engine import make_url  # here: ``telesnap simulate`` loads no database

    match = _DATABASE_URL.fullmatch(url.strip())
    if match is None:
        raise ConfigError(
            f"{variable} must be a database URL like sqlite+aiosqlite:///path/to/file.db or"
            " postgresql+asyncpg://user@host/db (plain sqlite:// and postgresql:// too)"
        )
    path, rest = match.groups()
    if path is not None:
        normalized = f"sqlite+aiosqlite://{path}"
        if _in_memory(make_url(normalized)):
            raise ConfigError(
                f"{variable} names an in-memory SQLite database, which each connection sees"
                " empty and which is gone at exit: give a file, like sqlite:///telesnap.db"
            )
        return normalized
    normalized = f"postgresql+asyncpg://{rest}"
    try:
        parsed = make_url(normalized)
    except ValueError:  # a port that is no number, an IPv6 address without its "]"
        raise ConfigError(
            f"{variable} must name its server as HOST or HOST:PORT with a port from 1 to 65535"
            " (an IPv6 address in brackets: [::1]:5432)"
        ) from None
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        raise ConfigError(f"{variable} has port {parsed.port}: it must be from 1 to 65535")
    return _with_asyncpg_ssl(parsed, normalized, variable)


_SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
_SSL_MODES_ACCEPTED = f"one of {', '.join(_SSL_MODES[:-1])} or {_SSL_MODES[-1]}"


def _with_asyncpg_ssl(parsed: URL, normalized: str, variable: str) -> str:
    """``normalized`` with libpq's ``sslmode`` as asyncpg's ``ssl``; any other query refused."""
    for name, value in parsed.query.items():
        if name not in ("sslmode", "ssl"):
            raise ConfigError(
                f"{variable} has {_shorten(name)}: a PostgreSQL URL takes only sslmode"
                f" ({_SSL_MODES_ACCEPTED})"
            )
        if not isinstance(value, str):
            raise ConfigError(f"{variable} has {name} more than once: give it once")
        if value not in _SSL_MODES:
            raise ConfigError(
                f"{variable} has {name}={_shorten(value)!r}: it must be {_SSL_MODES_ACCEPTED}"
            )
    if len(parsed.query) > 1:
        raise ConfigError(f"{variable} has both sslmode and ssl: give one")
    if "sslmode" not in parsed.query:
        return normalized
    ssl = parsed.difference_update_query(["sslmode"]).update_query_dict(
        {"ssl": parsed.query["sslmode"]}
    )
    return ssl.render_as_string(hide_password=False)


def _in_memory(url: URL) -> bool:
    database = url.database or ""
    in_memory = database in ("", ":memory:") or database.startswith("file::memory:")
    return in_memory or url.query.get("mode") == "memory"


def mask_password(url: str) -> str:
    """``url`` with the password it holds replaced by ``***`` (safe to log)."""
    return re.sub(r"^([^:/]+://[^:/@]*):[^@]*@", r"\1:***@", url)


def read_webhook_secret(path: Path, source: str) -> str:
    """The webhook secret in the file at ``path`` (one line); ``source`` names the path's origin."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: {str(path)!r} is not a text file") from None
    except OSError as error:
        reason = error.strerror or error
        raise ConfigError(f"{source}: cannot read the secret in {str(path)!r}: {reason}") from None
    return _check_webhook_secret(text.strip(), f"the webhook secret in {str(path)!r} ({source})")


def _check_webhook_secret(secret: str, source: str) -> str:
    """``secret`` if Telegram takes it and it is long enough to tell Telegram's POSTs apart."""
    rule = "all of A-Z a-z 0-9 _ - (make one with: openssl rand -hex 32)"
    if not 32 <= len(secret) <= 256:
        raise ConfigError(
            f"{source} has {len(secret)} characters: it must have at least 32 and at most 256,"
            f" {rule}"
        )
    wrong = re.search(r"[^A-Za-z0-9_-]", secret)
    if wrong:  # one character named is no leak of a secret that cannot be used anyway
        raise ConfigError(f"{source} holds {wrong[0]!r}: its characters must be {rule}")
    return secret


class Variable(NamedTuple):
    """How one ``TELESNAP_*`` variable sets one field of :class:`Settings`."""

    name: str
    target: str
    """The field it sets; ``pool.NAME`` is a field of :class:`PoolSettings`."""
    accepts: str
    """What the error says it must be (a ``parse`` raising ConfigError says it itself)."""
    parse: Callable[[str], Any] = str
    """Its stripped text to its value; ValueError or KeyError: not what it accepts."""
    check: Callable[[Any], object] = lambda _: True
    """False (or None): the parsed value is out of range."""
    secret: bool = False
    """Its value is never shown in an error."""


_API_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?", re.IGNORECASE)


_TOKEN_IN_PATH = re.compile(r"/bot\d+(?::|%3A)", re.IGNORECASE)


def _api_url(text: str) -> str:
    """``text`` without a trailing ``/``; ValueError unless it has a host and a usable port."""
    url = text.rstrip("/")
    if _TOKEN_IN_PATH.search(url):  # a method URL copied whole: never repeat it (the token)
        raise ConfigError(
            "TELESNAP_API_URL must be the Bot API server's root, without /bot and the token "
            f"(like {DEFAULT_API_URL}): the token goes in {TOKEN_VARIABLE}"
        )
    parts = urlsplit(url)  # ValueError: an IPv6 address without its "]"
    port = parts.port  # ValueError: a port that is no number, or above 65535
    if not _API_URL.fullmatch(url) or not parts.hostname or port == 0:
        raise ValueError(url)
    return url


_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_SECONDS = "a number of seconds above 0 and at most 3600"
VARIABLES = (
    Variable(TOKEN_VARIABLE, "token", "the bot token from @BotFather, like 123456:ABC-DEF"
             " (digits, a colon, then no spaces)", check=re.compile(r"\d+:\S+").fullmatch,
             secret=True),
    Variable("TELESNAP_API_URL", "api_url", "an http:// or https:// URL of a Bot API server,"
             f" with a host and any port from 1 to 65535, like {DEFAULT_API_URL}", _api_url),
    Variable(DATABASE_URL_VARIABLE, "database_url", "a database URL", normalize_database_url),
    Variable(LOG_LEVEL_VARIABLE, "log_level", f"one of {', '.join(_LEVELS)}", str.upper,
             _LEVELS.__contains__),
    Variable("TELESNAP_SHUFFLE_SEED", "shuffle_seed", "a whole number that fits in 64 bits"
             " (-2^63 to 2^63 - 1: it is stored with each game)", int,
             lambda seed: -(2**63) <= seed < 2**63),
    Variable("TELESNAP_FLOOD_CONTROL", "flood_control", "on or off",
             lambda text: {"on": True, "off": False}[text.lower()]),
    Variable(SANDBOX_PORT_VARIABLE, "sandbox_port", "a port number from 1 to 65535", int,
             lambda port: 1 <= port <= 65535),
    Variable("TELESNAP_HOST_ID", "host_id", "1 to 64 letters, digits or . _ : -",
             check=re.compile(r"[A-Za-z0-9._:-]{1,64}").fullmatch),
    Variable("TELESNAP_DB_POOL_SIZE", "pool.size", "a whole number of at least 1", int,
             lambda size: size >= 1),
    Variable("TELESNAP_DB_MAX_OVERFLOW", "pool.max_overflow", "a whole number of at least 0", int,
             lambda overflow: overflow >= 0),
    Variable("TELESNAP_DB_POOL_TIMEOUT", "pool.timeout_s", _SECONDS, float,
             lambda seconds: 0 < seconds <= 3600),  # also refuses nan and inf
    Variable("TELESNAP_DB_CONNECT_TIMEOUT", "pool.connect_timeout_s", _SECONDS, float,
             lambda seconds: 0 < seconds <= 3600),
    Variable(WEBHOOK_SECRET_VARIABLE, "webhook_secret", "a webhook secret",
             lambda text: _check_webhook_secret(text, WEBHOOK_SECRET_VARIABLE), secret=True),
    Variable(WEBHOOK_SECRET_FILE_VARIABLE, "webhook_secret", "a file",
             lambda text: read_webhook_secret(Path(text), WEBHOOK_SECRET_FILE_VARIABLE)),
)  # fmt: skip
"""Every variable, in the order they are checked. Of two rows with one target, give one."""


_TELEGRAMS = frozenset({"token", "webhook_secret"})
"""The settings only talking to Telegram uses."""


def load_settings(
    environ: Mapping[str, str] | None = None,
    env_file: Path | None = Path(".env"),
    require_token: bool = True,
    defaults: Mapping[str, str] | None = None,
) -> Settings:
    """Read the settings from ``environ`` (default: the process's), over ``env_file`` if any.

    ``require_token=False`` is for commands that never talk to Telegram: the token and the
    webhook secret are not read at all. A command's own ``defaults`` lie under both.
    """
    from_file = _read_env_file(env_file)
    values = {**(defaults or {}), **from_file}
    values.update(os.environ if environ is None else environ)
    given: dict[str, Any] = {}
    set_by: dict[str, str] = {}
    for variable in VARIABLES:
        text = (values.get(variable.name) or "").strip()
        if not text or (variable.target in _TELEGRAMS and not require_token):
            continue  # a command that never talks to Telegram has no use for them
        if variable.target in set_by:
            raise ConfigError(
                f"{set_by[variable.target]} and {variable.name} are both set: give one"
            )
        set_by[variable.target] = variable.name
        given[variable.target] = _parse(variable, text)
    misspelt = _misspelt(from_file, env_file)
    if require_token and "token" not in given:
        raise ConfigError(
            f"{TOKEN_VARIABLE} is not set: it must be {VARIABLES[0].accepts}"
            + "".join(f"; {line}" for line in misspelt)
        )
    pool = {
        name.removeprefix("pool."): given.pop(name) for name in set_by if name.startswith("pool.")
    }
    settings = Settings(**given, pool=PoolSettings(**pool))
    return replace(settings, warnings=misspelt + _warnings(settings, env_file))


def _misspelt(from_file: Mapping[str, str], env_file: Path | None) -> tuple[str, ...]:
    """A line for each ``TELESNAP_`` name in ``env_file`` that is no setting (a typo's value)."""
    names = [variable.name for variable in VARIABLES]
    lines = []
    for name in sorted(key for key in from_file if key.startswith("TELESNAP_")):
        if name not in names:
            meant = difflib.get_close_matches(name, names, n=1)
            guess = f": did you mean {meant[0]}?" if meant else ""
            lines.append(f"{env_file} sets {name}, which is no setting of telesnap{guess}")
    return tuple(lines)


def _parse(variable: Variable, text: str) -> Any:
    try:
        value = variable.parse(text)
        if variable.check(value):
            return value
    except ConfigError:
        raise
    except (ValueError, KeyError):
        pass
    shown = "" if variable.secret else f", got {_shorten(text)!r}"
    raise ConfigError(f"{variable.name} must be {variable.accepts}{shown}")


def _warnings(settings: Settings, env_file: Path | None) -> tuple[str, ...]:
    """What is risky in ``settings``, each as a line to log at start (the lines say why)."""
    mode = env_file.stat().st_mode if env_file is not None and env_file.is_file() else 0
    api = urlsplit(settings.api_url)
    host = (api.hostname or "").lower()
    local = host in ("localhost", "::1") or host.startswith("127.") or host.endswith(".localhost")
    telegram = settings.api_url == DEFAULT_API_URL
    risks = [
        (
            mode & (stat.S_IRWXG | stat.S_IRWXO),
            f"{env_file} can be read by other users (mode {stat.filemode(mode)}) and holds the"
            f" token: chmod 600 {env_file}",
        ),
        (
            api.scheme.lower() == "http" and not local,
            f"TELESNAP_API_URL is plain http:// to {host}: the token travels unencrypted;"
            " use https://",
        ),
        (
            telegram and not settings.flood_control,
            "TELESNAP_FLOOD_CONTROL is off against Telegram's own API: Telegram will throttle"
            " or block the bot",
        ),
        (
            telegram and settings.shuffle_seed is not None,
            "TELESNAP_SHUFFLE_SEED is set against Telegram's own API: every game deals the same"
            " cards, which players can foresee",
        ),
    ]
    return tuple(warning for risky, warning in risks if risky)


def _read_env_file(env_file: Path | None) -> dict[str, str]:
    """The values ``env_file`` sets; a line python-dotenv cannot read stops with its number."""
    if env_file is None or not env_file.is_file():
        return {}
    try:
        text = env_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"cannot read {env_file}: it must be a UTF-8 text file ({error})"
        ) from None
    # python-dotenv's own parser, the one its API uses, which says where a line failed (not
    # documented API: test_cli_errors.py's malformed .env test is the seam's test).
    for binding in parse_stream(io.StringIO(text)):
        # A TELESNAP_ name without "=" sets nothing: a value lost, not a shell-style export.
        bare = binding.value is None and (binding.key or "").startswith("TELESNAP_")
        if binding.error or bare:
            named = re.match(r"\s*(?:export\s+)?(TELESNAP_\w*)", binding.original.string)
            raise ConfigError(
                f"{env_file} line {binding.original.line}"
                f"{f' ({named[1]})' if named else ''} cannot be read: it must be NAME=VALUE"
                " with any quote closed"
            )
    values = dotenv_values(stream=io.StringIO(text))
    return {key: value for key, value in values.items() if value is not None}


def _shorten(text: str, limit: int = 60) -> str:
    """Keep error messages on one short line even for odd input."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
