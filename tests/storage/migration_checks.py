"""What the migration tests ask of the scripts and of a migrated database."""

from __future__ import annotations

import asyncio

from alembic import command
from alembic.script import ScriptDirectory

from telesnap.storage.migrate import alembic_config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def check_models_agree(url: str) -> None:
    """Alembic's ``check``: it raises if the database at ``url`` differs from the models."""
    await asyncio.to_thread(command.check, alembic_config(url))
