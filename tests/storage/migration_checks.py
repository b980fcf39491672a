"""What the migration tests ask of the scripts and of a migrated database."""

from __future__ import annotations

import asyncio

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

from telesnap.storage.migrate import alembic_config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def check_models_agree(url: str) -> None:
    """Alembic's ``check``: it raises if the database at ``url`` differs from the models."""
    await asyncio.to_thread(command.check, alembic_config(url))


def add_a_user_and_a_chat(connection: Connection, at: str) -> None:
    """User 1 (Ann) and group -5, as any revision since the first stores them."""
    connection.execute(
        text(
            "INSERT INTO users (id, first_name, created_at, updated_at) VALUES (1, 'Ann', :at, :at)"
        ),
        {"at": at},
    )
    connection.execute(
        text("INSERT INTO chats (id, type, is_forum, created_at) VALUES (-5, 'group', 0, :at)"),
        {"at": at},
    )
