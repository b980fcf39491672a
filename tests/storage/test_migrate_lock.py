"""Several workers starting at once: the migrations run once, the others wait and find them done."""

from __future__ import annotations

import asyncio
import sys

import pytest
from sqlalchemy import text

from telesnap.storage import migrate
from telesnap.storage.database import create_engine
from telesnap.storage.migrate import (
    MigrationBlockedError,
    current_revision,
    upgrade_database,
)

from .migration_checks import check_models_agree, head_revision

WORKERS = 3
BEFORE_ROW_IDS = "e5b2c7d4a913"
"""The revision before the one that widens the ids of ``games`` (which takes its lock)."""
UPGRADE = (
    "import asyncio, sys; from telesnap.storage.migrate import upgrade_database as up; "
    "asyncio.run(up(sys.argv[1]))"
)


async def upgrade_in_a_process(url: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        UPGRADE,
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode(errors="replace")


async def test_workers_upgrading_an_empty_database_at_once_all_succeed(database_url: str) -> None:
    results = await asyncio.gather(*(upgrade_in_a_process(database_url) for _ in range(WORKERS)))
    for returncode, output in results:
        assert returncode == 0, output
    assert await current_revision(database_url) == head_revision()
    await check_models_agree(database_url)


async def test_upgrades_at_once_in_one_process_all_succeed(database_url: str) -> None:
    await asyncio.gather(*(upgrade_database(database_url) for _ in range(WORKERS)))
    assert await current_revision(database_url) == head_revision()


async def test_a_migration_behind_a_long_transaction_fails_clearly_and_changes_nothing(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite has no lock_timeout: its writers queue on the database file")
    await upgrade_database(database_url, BEFORE_ROW_IDS)
    monkeypatch.setattr(migrate, "MIGRATION_LOCK_TIMEOUT_S", 0.2)
    engine = create_engine(database_url)
    try:
        async with engine.connect() as long_transaction:
            await long_transaction.execute(text("SELECT count(*) FROM games"))  # holds games
            with pytest.raises(MigrationBlockedError, match=r"waited 0\.2 s for a table lock"):
                await upgrade_database(database_url)
            assert await current_revision(database_url) == BEFORE_ROW_IDS
    finally:
        await engine.dispose()
    await upgrade_database(database_url)  # the transaction ended: the migration goes through
    assert await current_revision(database_url) == head_revision()
