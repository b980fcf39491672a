"""The database settings as operators write them: managed PostgreSQL URLs, pool settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from telesnap import app
from telesnap.app import BotRunner
from telesnap.cli import main
from telesnap.config import VARIABLES, PoolSettings, Settings, load_settings
from telesnap.storage import migrate
from telesnap.storage.database import create_engine
from tests.test_cli_errors import one_line, telesnap

POSTGRES_URL_VARIABLE = "TELESNAP_TEST_POSTGRES_URL"


def test_libpqs_sslmode_is_asyncpgs_ssl() -> None:
    url = "postgresql://bot:pw@db.example:25060/snap?sslmode=require"
    settings = load_settings({"TELESNAP_DATABASE_URL": url}, env_file=None, require_token=False)
    assert settings.database_url == "postgresql+asyncpg://bot:pw@db.example:25060/snap?ssl=require"


def test_a_parameter_telesnap_does_not_pass_on_is_one_line_naming_it(tmp_path: Path) -> None:
    for query, named in (("sslmode=required", "sslmode='required'"), ("sslcert=x", "sslcert")):
        url = f"postgresql://postgres@127.0.0.1/test?{query}"
        line = one_line(telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=url))
        assert line.startswith(f"telesnap: TELESNAP_DATABASE_URL has {named}")
        assert "disable, allow, prefer, require, verify-ca or verify-full" in line
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def postgres_server() -> str:
    url = os.environ.get(POSTGRES_URL_VARIABLE)
    if not url:
        pytest.skip(f"{POSTGRES_URL_VARIABLE} is not set")
    return url


def test_a_managed_databases_url_with_sslmode_is_taken(
    tmp_path: Path, postgres_database_url: str
) -> None:
    plain = postgres_database_url.replace("postgresql+asyncpg://", "postgresql://")
    result = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=f"{plain}?sslmode=disable")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "telesnap: the database is up to date (postgresql+asyncpg)\n"


def test_sslmode_require_against_a_server_without_tls_is_one_line(
    tmp_path: Path, postgres_server: str
) -> None:
    plain = postgres_server.replace("postgresql+asyncpg://", "postgresql://")
    url = f"{plain}?sslmode=require"
    line = one_line(telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=url))
    assert line.startswith("telesnap: cannot connect to the PostgreSQL database")
    assert "SSL" in line


def _recording_engines(monkeypatch: pytest.MonkeyPatch) -> list[PoolSettings | None]:
    """The pool of every engine the migrations create from now on."""
    pools: list[PoolSettings | None] = []

    def recording(url: str, pool: PoolSettings | None = None) -> object:
        pools.append(pool)
        return create_engine(url, pool)

    monkeypatch.setattr(migrate, "create_engine", recording)
    return pools


def test_db_upgrade_connects_within_the_connect_timeout_of_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools = _recording_engines(monkeypatch)
    monkeypatch.chdir(tmp_path)  # no .env here, and the default database
    for variable in VARIABLES:
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.setenv("TELESNAP_DB_CONNECT_TIMEOUT", "2.5")
    assert main(["db", "upgrade"]) == 0
    assert [pool and pool.connect_timeout_s for pool in pools] == [2.5]


async def test_the_bot_migrates_within_the_connect_timeout_of_its_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools = _recording_engines(monkeypatch)
    settings = Settings(
        token="123456:secret",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'telesnap.db'}",
        pool=PoolSettings(connect_timeout_s=2.5),
    )
    runner = BotRunner(settings)
    monkeypatch.setattr(app, "connect", _refuse)  # stop after the migrations
    with pytest.raises(_StoppedError):
        await runner.start()
    await runner.stop()
    assert [pool and pool.connect_timeout_s for pool in pools] == [2.5]


class _StoppedError(Exception):
    pass


async def _refuse(*_: object) -> None:
    raise _StoppedError


def test_a_file_that_is_not_a_sqlite_database_is_named_so(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("shopping: milk, eggs\n" * 200)
    url = "sqlite+aiosqlite:///notes.db"
    result = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=url)
    assert result.returncode == 2
    assert one_line(result).startswith(
        "telesnap: cannot open the SQLite file notes.db: it is not a SQLite database"
    )
