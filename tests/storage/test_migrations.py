"""Migrations: they build exactly the models' schema, from code or from alembic.ini."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect

from telesnap.storage import migrate
from telesnap.storage.database import create_engine
from telesnap.storage.migrate import (
    current_revision,
    script_location,
    upgrade_database,
)
from telesnap.storage.models import Base

from .migration_checks import check_models_agree, head_revision

ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS = ROOT / "migrations"
VERSIONS = MIGRATIONS / "versions"


async def table_names(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


async def test_upgrade_creates_every_table_at_head(database_url: str) -> None:
    assert await current_revision(database_url) is None
    await upgrade_database(database_url)
    assert await current_revision(database_url) == head_revision()
    assert set(Base.metadata.tables) <= await table_names(database_url)


async def test_models_and_migrations_agree(migrated_database_url: str) -> None:
    await check_models_agree(migrated_database_url)


async def test_upgrading_twice_changes_nothing(migrated_database_url: str) -> None:
    await upgrade_database(migrated_database_url)
    assert await current_revision(migrated_database_url) == head_revision()


async def test_a_plain_sqlite_url_is_upgraded(tmp_path: Path) -> None:
    await upgrade_database(f"sqlite:///{tmp_path / 'sync.db'}")
    assert (tmp_path / "sync.db").is_file()


def test_the_alembic_command_line_config_works_with_an_x_url(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    config = Config(ROOT / "alembic.ini", cmd_opts=argparse.Namespace(x=[f"url={url}"]))
    assert Path(str(config.get_main_option("script_location"))) == MIGRATIONS
    command.upgrade(config, "head")
    command.check(config)


def test_revision_files_are_named_by_date() -> None:
    revisions = [path.name for path in VERSIONS.glob("*.py") if path.name != "__init__.py"]
    assert revisions
    for name in revisions:
        assert re.fullmatch(r"\d{4}_\d{2}_\d{2}_[0-9a-f]{12}_\w+\.py", name), name


def test_the_scripts_have_one_home_at_the_top_of_the_checkout() -> None:
    assert script_location() == MIGRATIONS
    assert not (ROOT / "telesnap" / "migrations" / "env.py").exists()


def test_a_wheel_uses_the_copy_inside_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = tmp_path / "site-packages" / "telesnap" / "migrations"
    installed.mkdir(parents=True)
    (installed / "env.py").write_text("", encoding="utf-8")
    monkeypatch.setattr(migrate, "INSTALLED_SCRIPTS", installed)
    assert script_location() == installed
    monkeypatch.setattr(migrate, "CHECKOUT_SCRIPTS", tmp_path / "nowhere")
    assert script_location() == installed
    monkeypatch.setattr(migrate, "INSTALLED_SCRIPTS", tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="the migration scripts are missing"):
        script_location()


def test_the_environment_script_does_nothing_when_merely_imported() -> None:
    spec = importlib.util.spec_from_file_location("telesnap_migrations_env", MIGRATIONS / "env.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.run_environment)
