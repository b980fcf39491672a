"""Multi-worker acceptance runs: real processes (emulator, nginx, workers) on PostgreSQL.

The runs behind nginx need nginx (Debian's package: ``apt-get install nginx``; or
``TELESNAP_NGINX``) and ``TELESNAP_TEST_POSTGRES_URL``. Without them those tests are
skipped with that reason; ``TELESNAP_MULTIWORKER_TESTS=required`` (CI sets it) makes a missing
one an error instead.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.multiworker.processes import NGINX, POSTGRES_URL_VARIABLE, private_postgres

REQUIRED_VARIABLE = "TELESNAP_MULTIWORKER_TESTS"


def missing_parts(*, postgres: bool = True) -> str:
    """Why the runs cannot happen here ('' when they can)."""
    if not Path(NGINX).exists():
        return f"no nginx at {NGINX} (apt-get install nginx)"
    if postgres and not os.environ.get(POSTGRES_URL_VARIABLE):
        return f"{POSTGRES_URL_VARIABLE} is not set"
    return ""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    ours = [item for item in items if Path(str(item.fspath)).resolve().parent == here]
    # The runs on PostgreSQL behind nginx ask for ``postgres_url``; the others need neither.
    needing = [item for item in ours if "postgres_url" in getattr(item, "fixturenames", ())]
    reason = missing_parts()
    if reason and needing and os.environ.get(REQUIRED_VARIABLE) == "required":
        raise pytest.UsageError(f"the multi-worker tests cannot run: {reason}")
    for item in ours:
        if reason and item in needing:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """A PostgreSQL database of the test's own, dropped after it."""
    async with private_postgres() as url:
        yield url
