"""The lines `telesnap sandbox` prints when it is up."""

from __future__ import annotations

from telesnap.sandbox.app import SandboxOptions
from telesnap.sandbox.cli import start_lines

URL = "http://127.0.0.1:8080/?k=key"


def test_the_start_lines_offer_fresh_for_a_sqlite_file() -> None:
    lines = start_lines(URL, SandboxOptions(database_url="sqlite+aiosqlite:///games.db"))
    assert "  games are kept in games.db (--fresh starts over)" in lines


def test_the_start_lines_do_not_offer_fresh_where_it_refuses() -> None:
    url = "postgresql+asyncpg://snap@db.example:5432/games"
    lines = start_lines(URL, SandboxOptions(database_url=url))
    kept = next(line for line in lines if "games are kept in" in line)
    assert "db.example" in kept
    assert "--fresh" not in "\n".join(lines)


def test_the_start_lines_do_not_print_the_databases_password() -> None:
    url = "postgresql+asyncpg://snap:s3cret-word@db.example:5432/games"
    lines = "\n".join(start_lines(URL, SandboxOptions(database_url=url)))
    assert "s3cret-word" not in lines
    assert "telesnap replay --game ID --database-url postgresql+asyncpg://snap:" in lines
