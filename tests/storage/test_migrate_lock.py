"""Several workers starting at once: the migrations run once, the others wait and find them done."""

from __future__ import annotations

import asyncio
import sys

from telesnap.storage.migrate import (
    current_revision,
    head_revision,
    schema_differences,
    upgrade_database,
)

WORKERS = 3
UPGRADE = (
    "import sys; from telesnap.storage.migrate import upgrade_database_sync as up; up(sys.argv[1])"
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
    assert await schema_differences(database_url) == []


async def test_upgrades_at_once_in_one_process_all_succeed(database_url: str) -> None:
    await asyncio.gather(*(upgrade_database(database_url) for _ in range(WORKERS)))
    assert await current_revision(database_url) == head_revision()
