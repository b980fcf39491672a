"""Settings: defaults, .env loading, URL mapping, one-line errors naming the variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy.pool import QueuePool

from telesnap.app import Webhook
from telesnap.cli import main
from telesnap.cli.workers import worker_specs
from telesnap.config import (
    DEFAULT_API_URL,
    DEFAULT_DATABASE_URL,
    VARIABLES,
    ConfigError,
    PoolSettings,
    Settings,
    default_host_id,
    load_settings,
)
from telesnap.storage.database import create_engine

TOKEN = "123456:AAH-secret_part"


def load(**values: str) -> Settings:
    return load_settings(values, env_file=None)


def test_defaults_with_only_a_token() -> None:
    settings = load(TELESNAP_TOKEN=TOKEN)
    assert settings.token == TOKEN
    assert settings.api_url == DEFAULT_API_URL
    assert settings.database_url == DEFAULT_DATABASE_URL
    assert settings.log_level == "INFO"


def test_token_is_masked_in_repr_and_str() -> None:
    settings = load(TELESNAP_TOKEN=TOKEN)
    for text in (repr(settings), str(settings), f"{settings}"):
        assert "secret_part" not in text
        assert "123456:***" in text


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TELESNAP_TOKEN", ""),
        ("TELESNAP_TOKEN", "no colon here"),
        ("TELESNAP_API_URL", "ftp://example.org"),
        ("TELESNAP_API_URL", "api.telegram.org"),
        ("TELESNAP_DATABASE_URL", "mysql://user@host/db"),
        ("TELESNAP_DATABASE_URL", "just-a-file.db"),
        ("TELESNAP_DATABASE_URL", "postgresql:///nohost"),
        ("TELESNAP_LOG_LEVEL", "LOUD"),
        ("TELESNAP_HOST_ID", "two words"),
        ("TELESNAP_HOST_ID", "x" * 65),
    ],
)
def test_a_bad_setting_raises_one_line_naming_the_variable(variable: str, value: str) -> None:
    values = {"TELESNAP_TOKEN": TOKEN, variable: value}
    with pytest.raises(ConfigError) as raised:
        load_settings(values, env_file=None)
    message = str(raised.value)
    assert message.startswith(variable)
    assert "\n" not in message
    assert isinstance(raised.value, ValueError)


def test_a_missing_token_is_an_error_only_when_required() -> None:
    with pytest.raises(ConfigError, match=r"^TELESNAP_TOKEN is not set"):
        load()
    assert load_settings({}, env_file=None, require_token=False).token is None


def test_an_error_never_shows_the_database_password() -> None:
    with pytest.raises(ConfigError) as raised:
        load(TELESNAP_TOKEN=TOKEN, TELESNAP_DATABASE_URL="mysql://bot:hunter2@db/snap")
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///games.db", "sqlite+aiosqlite:///games.db"),
        ("sqlite:////var/lib/telesnap.db", "sqlite+aiosqlite:////var/lib/telesnap.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://bot@db:5432/snap", "postgresql+asyncpg://bot@db:5432/snap"),
        ("postgres://bot@db/snap", "postgresql+asyncpg://bot@db/snap"),
        ("postgresql+asyncpg://bot:pw@db/snap", "postgresql+asyncpg://bot:pw@db/snap"),
    ],
)
def test_database_urls_are_mapped_to_the_async_drivers(given: str, expected: str) -> None:
    assert load(TELESNAP_TOKEN=TOKEN, TELESNAP_DATABASE_URL=given).database_url == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8081/", "http://127.0.0.1:8081"),
        ("https://api.telegram.org", "https://api.telegram.org"),
        ("https://proxy.example.org/telegram//", "https://proxy.example.org/telegram"),
    ],
)
def test_api_url_loses_its_trailing_slash(given: str, expected: str) -> None:
    assert load(TELESNAP_TOKEN=TOKEN, TELESNAP_API_URL=given).api_url == expected


def test_log_level_is_case_insensitive() -> None:
    settings = load(TELESNAP_TOKEN=TOKEN, TELESNAP_LOG_LEVEL="debug")
    assert settings.log_level == "DEBUG"


def test_env_file_is_read_and_the_environment_wins(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        f"TELESNAP_TOKEN={TOKEN}\nTELESNAP_LOG_LEVEL=WARNING\n"
        "TELESNAP_DATABASE_URL=sqlite:///from-file.db\n",
        encoding="utf-8",
    )
    settings = load_settings({"TELESNAP_LOG_LEVEL": "ERROR"}, env_file=env_file)
    assert settings.token == TOKEN
    assert settings.log_level == "ERROR"
    assert settings.database_url == "sqlite+aiosqlite:///from-file.db"


def test_a_missing_env_file_is_fine(tmp_path: Path) -> None:
    settings = load_settings({"TELESNAP_TOKEN": TOKEN}, env_file=tmp_path / "absent.env")
    assert settings.token == TOKEN


def test_settings_are_frozen() -> None:
    settings = load(TELESNAP_TOKEN=TOKEN)
    with pytest.raises(AttributeError):
        settings.token = "1:other"  # type: ignore[misc]


def test_shuffle_seed_and_flood_control_are_read_from_the_env_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        f"TELESNAP_TOKEN={TOKEN}\nTELESNAP_SHUFFLE_SEED=7\nTELESNAP_FLOOD_CONTROL=off\n"
    )
    settings = load_settings({}, env_file=env_file)
    assert settings.shuffle_seed == 7
    assert settings.flood_control is False
    overridden = load_settings({"TELESNAP_FLOOD_CONTROL": "on"}, env_file=env_file)
    assert overridden.flood_control is True, "the environment wins"


def test_shuffle_seed_and_flood_control_defaults() -> None:
    settings = load(TELESNAP_TOKEN=TOKEN)
    assert settings.shuffle_seed is None
    assert settings.flood_control is True


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TELESNAP_SHUFFLE_SEED", "seven"),
        ("TELESNAP_SHUFFLE_SEED", str(2**63)),  # would not fit the games' seed column
        ("TELESNAP_SHUFFLE_SEED", "1" * 25),
        ("TELESNAP_FLOOD_CONTROL", "maybe"),
    ],
)
def test_a_bad_shuffle_seed_or_flood_control_is_one_line_naming_it(
    variable: str, value: str
) -> None:
    with pytest.raises(ConfigError) as error:
        load(TELESNAP_TOKEN=TOKEN, **{variable: value})
    message = str(error.value)
    assert variable in message
    assert "\n" not in message


def test_the_runner_takes_its_shuffle_seed_and_flood_control_from_the_settings() -> None:
    from telesnap.app import BotRunner

    runner = BotRunner(Settings(token=TOKEN, shuffle_seed=5, flood_control=False))
    assert runner.shuffle_seed == 5
    assert runner.limits.enabled is False


def test_the_host_id_defaults_to_the_hostname_and_can_be_set() -> None:
    assert load(TELESNAP_TOKEN=TOKEN).host_id == default_host_id()
    assert default_host_id() == default_host_id().strip() != ""
    assert load(TELESNAP_TOKEN=TOKEN, TELESNAP_HOST_ID="worker-2.eu").host_id == "worker-2.eu"


def test_the_database_pool_defaults_and_is_read_from_the_env_file(tmp_path: Path) -> None:
    assert load(TELESNAP_TOKEN=TOKEN).pool == PoolSettings(10, 10, 30.0, 10.0)
    env_file = tmp_path / ".env"
    env_file.write_text(
        "TELESNAP_DB_POOL_SIZE=4\nTELESNAP_DB_MAX_OVERFLOW=0\n"
        "TELESNAP_DB_POOL_TIMEOUT=2.5\nTELESNAP_DB_CONNECT_TIMEOUT=3\n",
        encoding="utf-8",
    )
    settings = load_settings({"TELESNAP_TOKEN": TOKEN, "TELESNAP_DB_POOL_SIZE": "6"}, env_file)
    assert settings.pool == PoolSettings(6, 0, 2.5, 3.0), "the environment wins over the file"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"TELESNAP_DB_POOL_SIZE": "0"}, "TELESNAP_DB_POOL_SIZE must be a whole number of at"),
        ({"TELESNAP_DB_POOL_SIZE": "ten"}, "TELESNAP_DB_POOL_SIZE must be a whole number"),
        ({"TELESNAP_DB_MAX_OVERFLOW": "-1"}, "TELESNAP_DB_MAX_OVERFLOW must be a whole number"),
        ({"TELESNAP_DB_POOL_TIMEOUT": "0"}, "TELESNAP_DB_POOL_TIMEOUT must be a number of"),
        ({"TELESNAP_DB_POOL_TIMEOUT": "nan"}, "TELESNAP_DB_POOL_TIMEOUT must be a number of"),
        ({"TELESNAP_DB_CONNECT_TIMEOUT": "soon"}, "TELESNAP_DB_CONNECT_TIMEOUT must be a number"),
        (
            {"TELESNAP_DB_POOL_SIZE": "1", "TELESNAP_DB_MAX_OVERFLOW": "0"},
            "TELESNAP_DB_POOL_SIZE + TELESNAP_DB_MAX_OVERFLOW is 1: it must be at least 2",
        ),
    ],
)  # fmt: skip
def test_a_bad_pool_setting_is_one_line_naming_it(values: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load(TELESNAP_TOKEN=TOKEN, **values)
    message = str(raised.value)
    assert expected in message
    assert "\n" not in message


async def test_the_engine_of_postgresql_takes_its_pool_from_the_settings() -> None:
    engine = create_engine("postgresql+asyncpg://bot@db.invalid/snap", PoolSettings(3, 2, 7.0, 4.0))
    try:
        pool = engine.pool
        assert isinstance(pool, QueuePool)
        assert (pool.size(), pool.timeout()) == (3, 7.0)
    finally:
        await engine.dispose()


def test_every_variable_the_readme_documents_is_read_and_no_other() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(TELESNAP_\w+)` \|", section, re.MULTILINE))
    assert documented == {variable.name for variable in VARIABLES}


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TELESNAP_TOKEN", "123456 hunter2"),
        ("TELESNAP_WEBHOOK_SECRET", "hunter2"),
        ("TELESNAP_WEBHOOK_SECRET", "hunter2" * 6 + "!"),
        ("TELESNAP_DATABASE_URL", "mysql://bot:hunter2@db/snap"),
    ],
)
def test_a_malformed_secret_is_named_but_never_shown(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({"TELESNAP_TOKEN": TOKEN, variable: value}, env_file=None)
    message = str(raised.value)
    assert variable in message
    assert "hunter2" not in message
    assert "\n" not in message


def test_a_blank_variable_counts_as_unset() -> None:
    settings = load(TELESNAP_TOKEN=TOKEN, TELESNAP_LOG_LEVEL=" ", TELESNAP_SHUFFLE_SEED="")
    assert (settings.log_level, settings.shuffle_seed) == ("INFO", None)


def test_the_webhook_secret_comes_from_one_variable_or_the_other(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text("s" * 32 + "\n")
    both = {"TELESNAP_WEBHOOK_SECRET": "t" * 32, "TELESNAP_WEBHOOK_SECRET_FILE": str(secret_file)}
    with pytest.raises(ConfigError, match=r"^TELESNAP_WEBHOOK_SECRET and .*_FILE are both set"):
        load(TELESNAP_TOKEN=TOKEN, **both)
    with pytest.raises(ConfigError, match=r"cannot read the secret in .*absent"):
        load(TELESNAP_TOKEN=TOKEN, TELESNAP_WEBHOOK_SECRET_FILE=str(tmp_path / "absent"))


def test_a_worker_takes_the_secret_its_supervisor_gives_over_the_env_files(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(f"TELESNAP_TOKEN={TOKEN}\nTELESNAP_WEBHOOK_SECRET_FILE=/run/gone\n")
    env_file.chmod(0o600)
    webhook = Webhook("https://bot.example/telegram", "127.0.0.1", 8443, "w" * 40)
    (spec,) = worker_specs(webhook, 1, resume=True)
    settings = load_settings(spec.environment(), env_file)
    assert settings.webhook_secret == "w" * 40
    assert "w" * 40 not in repr(settings)


def test_a_bad_setting_stops_a_command_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.setenv("TELESNAP_DB_POOL_TIMEOUT", "soon")
    assert main(["db", "upgrade"]) == 2
    assert capsys.readouterr().err == (
        "telesnap: TELESNAP_DB_POOL_TIMEOUT must be a number of seconds above 0 and at most"
        " 3600, got 'soon'\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_largest_seeds_that_fit_are_taken() -> None:
    assert (
        load(TELESNAP_TOKEN=TOKEN, TELESNAP_SHUFFLE_SEED=str(2**63 - 1)).shuffle_seed == 2**63 - 1
    )
    assert load(TELESNAP_TOKEN=TOKEN, TELESNAP_SHUFFLE_SEED=str(-(2**63))).shuffle_seed == -(2**63)


def test_an_env_file_that_is_not_utf8_is_one_line_naming_it(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(f"TELESNAP_TOKEN={TOKEN}\n", encoding="utf-16")  # as Notepad may save it
    with pytest.raises(ConfigError) as error:
        load_settings({}, env_file=env_file)
    message = str(error.value)
    assert str(env_file) in message
    assert "UTF-8" in message
    assert "\n" not in message


def test_a_command_that_never_talks_to_telegram_ignores_a_malformed_token() -> None:
    """The sandbox, `db upgrade`, `replay` and `export` use no token: a bad one in the
    environment or `.env` (meant for `telesnap run`) is no reason to refuse them."""
    settings = load_settings({"TELESNAP_TOKEN": "not a token"}, env_file=None, require_token=False)
    assert settings.token is None
    with pytest.raises(ConfigError, match="TELESNAP_TOKEN must be"):
        load_settings({"TELESNAP_TOKEN": "not a token"}, env_file=None)
