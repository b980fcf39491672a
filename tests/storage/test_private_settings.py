"""What the settings and the database keep private: passwords, parameters, file modes, warnings."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from telesnap.config import load_settings
from telesnap.storage.database import create_engine

TOKEN = {"TELESNAP_TOKEN": "123:abc"}


def test_the_database_password_is_masked_in_the_settings_repr() -> None:
    url = "postgresql+asyncpg://bot:pa55word@db.internal/snap"
    settings = load_settings({**TOKEN, "TELESNAP_DATABASE_URL": url}, env_file=None)
    assert settings.database_url == url
    assert "pa55word" not in repr(settings)
    assert "postgresql+asyncpg://bot:***@db.internal/snap" in repr(settings)


async def test_a_new_sqlite_database_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "games.db"
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE t (x INTEGER)"))
    finally:
        await engine.dispose()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_failed_statement_does_not_show_its_parameters(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}")
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE t (x INTEGER UNIQUE)"))
            await connection.execute(text("INSERT INTO t VALUES (:x)"), {"x": 41})
            with pytest.raises(Exception, match="UNIQUE") as raised:
                await connection.execute(text("INSERT INTO t VALUES (:x)"), {"x": 41})
    finally:
        await engine.dispose()
    assert "41" not in str(raised.value)
    assert "hidden due to hide_parameters" in str(raised.value)


def env_file_of(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    """A ``.env`` file holding ``text``, with ``mode``."""
    env_file = tmp_path / ".env"
    env_file.write_text(text)
    env_file.chmod(mode)
    return env_file


def test_a_env_file_others_can_read_is_warned_about(tmp_path: Path) -> None:
    env_file = env_file_of(tmp_path, "TELESNAP_TOKEN=123:abc\n", 0o644)
    (warning,) = load_settings({}, env_file=env_file).warnings
    assert "can be read by other users" in warning
    assert "chmod 600" in warning
    env_file.chmod(0o600)
    assert load_settings({}, env_file=env_file).warnings == ()


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"TELESNAP_API_URL": "http://bot-api.internal:8081"}, "plain http:// to bot-api.internal"),
        ({"TELESNAP_FLOOD_CONTROL": "off"}, "TELESNAP_FLOOD_CONTROL is off against Telegram"),
        ({"TELESNAP_SHUFFLE_SEED": "7"}, "TELESNAP_SHUFFLE_SEED is set against Telegram"),
    ],
)
def test_risky_settings_are_warned_about(variables: dict[str, str], expected: str) -> None:
    (warning,) = load_settings({**TOKEN, **variables}, env_file=None).warnings
    assert expected in warning


def test_the_emulator_on_this_machine_is_no_risk() -> None:
    local = {
        "TELESNAP_API_URL": "http://127.0.0.1:8081",
        "TELESNAP_FLOOD_CONTROL": "off",
        "TELESNAP_SHUFFLE_SEED": "7",
    }
    assert load_settings({**TOKEN, **local}, env_file=None).warnings == ()


def test_run_logs_the_warnings(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from telesnap.cli import main
    from telesnap.cli import run as run_module

    monkeypatch.setenv("TELESNAP_TOKEN", "123:abc")
    monkeypatch.setenv("TELESNAP_FLOOD_CONTROL", "off")
    monkeypatch.chdir(Path(__file__).parent)  # no .env here

    class Stops:
        def __init__(self, *args: object, **kwargs: object) -> None: ...

        async def run_until_stopped(self) -> None: ...

    monkeypatch.setattr(run_module, "BotRunner", Stops)
    with caplog.at_level(logging.WARNING, logger="telesnap.config"):
        assert main(["run"]) == 0
    assert "TELESNAP_FLOOD_CONTROL is off against Telegram" in caplog.text


def test_a_misspelt_name_in_the_env_file_is_named_with_the_one_meant(tmp_path: Path) -> None:
    """A setting lost to a typo is said at start, not left to look like the default."""
    env_file = env_file_of(
        tmp_path, "TELESNAP_TOKEN=123:abc\nTELESNAP_DATABSE_URL=sqlite:///x.db\n"
    )
    (warning,) = load_settings({}, env_file=env_file).warnings
    assert "TELESNAP_DATABSE_URL" in warning
    assert "did you mean TELESNAP_DATABASE_URL?" in warning


def test_a_misspelt_token_name_is_named_where_the_token_is_missed(tmp_path: Path) -> None:
    from telesnap.config import ConfigError

    env_file = env_file_of(tmp_path, "TELESNAP_TOKN=123:abc\n")
    with pytest.raises(ConfigError) as raised:
        load_settings({}, env_file=env_file)
    assert "TELESNAP_TOKEN is not set" in str(raised.value)
    assert "TELESNAP_TOKN" in str(raised.value)


async def test_a_sqlite_file_that_cannot_be_written_stops_the_start(tmp_path: Path) -> None:
    """Read-only (here opened so; a file's mode or folder does the same to another user): the
    start says so, instead of a bot that stores no update and answers nobody."""
    from telesnap.storage.migrate import DatabasePrivilegeError, upgrade_database

    path = tmp_path / "games.db"
    await upgrade_database(f"sqlite+aiosqlite:///{path}")
    with pytest.raises(DatabasePrivilegeError, match=r"cannot be written .*readonly"):
        await upgrade_database(f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true")
