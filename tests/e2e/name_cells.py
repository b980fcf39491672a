"""Counting the database cells that hold a piece of text (a player's name), in every table."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from sqlalchemy import JSON, String, Text, select

from telesnap.storage.database import create_engine
from telesnap.storage.models import Base


def _holds(value: Any, text: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    return text in value


async def cells_holding(database_url: str, text: str) -> Counter[str]:
    """How many cells of each ``table.column`` (text or JSON) hold ``text``."""
    engine = create_engine(database_url)
    found: Counter[str] = Counter()
    try:
        async with engine.connect() as connection:
            for table in Base.metadata.sorted_tables:
                columns = [
                    column
                    for column in table.columns
                    if isinstance(column.type, String | Text | JSON)
                ]
                if not columns:
                    continue
                for row in await connection.execute(select(*columns)):
                    for column, value in zip(columns, row, strict=True):
                        if _holds(value, text):
                            found[f"{table.name}.{column.name}"] += 1
    finally:
        await engine.dispose()
    return found
