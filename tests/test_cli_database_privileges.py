"""A PostgreSQL user without the privileges telesnap needs: one line, exit code 2, what to do.

Each case runs the real command as the README's recipe has the operator run it: a database
made by ``postgres`` and a URL for another user.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from telesnap.cli import main
from telesnap.cli import run as cli_run
from telesnap.config import normalize_database_url
from tests.conftest import POSTGRES_SKIP_REASON, POSTGRES_URL_VARIABLE, _run_admin_sql
from tests.conftest import _run_in_own_thread as run_in_own_thread
from tests.test_cli_errors import closed_port, one_line, telesnap

PASSWORD = "never-shown-pw"


class Setup:
    """A database owned by the server's admin, and a user of its own that owns nothing."""

    def __init__(self, admin_url: str) -> None:
        suffix = f"{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self.name = f"telesnap_test_priv_{suffix}"
        self.user = f"telesnap_test_user_{suffix}"
        self.admin = make_url(admin_url)
        self.admin_url = self.admin.set(database=self.name).render_as_string(hide_password=False)
        self.url = (
            self.admin.set(database=self.name, username=self.user, password=PASSWORD)
        ).render_as_string(hide_password=False)

    def in_database(self, *statements: str) -> None:
        run_in_own_thread(_run_admin_sql(self.admin_url, *statements))


@pytest.fixture
def setup() -> Iterator[Setup]:
    server_url = os.environ.get(POSTGRES_URL_VARIABLE)
    if not server_url:
        pytest.skip(POSTGRES_SKIP_REASON)
    admin_url = normalize_database_url(server_url, variable=POSTGRES_URL_VARIABLE)
    made = Setup(admin_url)
    run_in_own_thread(
        _run_admin_sql(
            admin_url,
            f"CREATE ROLE \"{made.user}\" LOGIN PASSWORD '{PASSWORD}'",
            f'CREATE DATABASE "{made.name}"',
        )
    )
    try:
        yield made
    finally:
        run_in_own_thread(
            _run_admin_sql(
                admin_url,
                f'DROP DATABASE IF EXISTS "{made.name}" WITH (FORCE)',
                f'DROP ROLE IF EXISTS "{made.user}"',
            )
        )


def test_a_user_that_cannot_create_tables_is_told_to_own_the_database(
    tmp_path: Path, setup: Setup
) -> None:
    result = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=setup.url)
    line = one_line(result)
    assert result.returncode == 2
    assert line.startswith(f"telesnap: the PostgreSQL database {setup.name} at ")
    assert "permission denied for schema public" in line
    assert f"the user {setup.user} cannot create tables in schema public" in line
    assert f"createdb -O {setup.user} {setup.name}" in line
    assert PASSWORD not in line


def test_a_user_that_can_only_read_is_refused_at_start_naming_what_it_lacks(
    tmp_path: Path, setup: Setup
) -> None:
    admin = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=setup.admin_url)
    assert admin.returncode == 0, admin.stderr
    setup.in_database(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{setup.user}"')
    bot = {
        "TELESNAP_DATABASE_URL": setup.url,
        "TELESNAP_TOKEN": "123:secret",
        "TELESNAP_API_URL": f"http://127.0.0.1:{closed_port()}",
    }
    for arguments in (("db", "upgrade"), ("run",)):
        result = telesnap(tmp_path, *arguments, **bot)
        assert result.returncode == 2, arguments
        assert "Traceback" not in result.stderr
        line = result.stderr.strip().splitlines()[-1]  # run logs its start (INFO) before it
        assert line.startswith(f"telesnap: the user {setup.user} cannot use telesnap's tables")
        assert f"the PostgreSQL database {setup.name} at " in line
        assert "lacks INSERT, UPDATE, DELETE on every table; USAGE on the sequences" in line
        assert f"ON ALL TABLES IN SCHEMA public TO {setup.user}" in line
        assert PASSWORD not in line


def test_granted_what_it_needs_the_user_migrates_nothing_and_passes(
    tmp_path: Path, setup: Setup
) -> None:
    admin = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=setup.admin_url)
    assert admin.returncode == 0, admin.stderr
    setup.in_database(
        f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{setup.user}"',
        f'GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "{setup.user}"',
    )
    result = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=setup.url)
    assert result.returncode == 0, result.stderr


def test_export_by_a_user_that_cannot_read_is_one_line(tmp_path: Path, setup: Setup) -> None:
    admin = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=setup.admin_url)
    assert admin.returncode == 0, admin.stderr
    result = telesnap(tmp_path, "export", "--chat", "5", "--database-url", setup.url)
    line = one_line(result)
    assert result.returncode == 2
    assert line.startswith(f"telesnap: the PostgreSQL database {setup.name} at ")
    assert "permission denied for table alembic_version" in line
    assert f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {setup.user}" in line
    assert PASSWORD not in line


class InsufficientPrivilegeError(Exception):
    """What asyncpg raises for PostgreSQL's SQLSTATE 42501."""

    sqlstate = "42501"


def test_a_refusal_for_privilege_anywhere_in_a_command_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refused(_: object) -> int:
        try:
            raise InsufficientPrivilegeError("permission denied for table games")
        except InsufficientPrivilegeError as cause:
            raise RuntimeError("wrapped, as SQLAlchemy wraps it") from cause

    monkeypatch.setattr(cli_run, "upgrade_command", refused)
    assert main(["db", "upgrade"]) == 2
    assert capsys.readouterr().err == (
        "telesnap: the database refused: permission denied for table games: its user lacks a"
        " privilege there (make it the database's owner, or GRANT what is named)\n"
    )


def test_export_of_an_empty_file_leaves_it_empty(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    result = telesnap(tmp_path, "export", "--chat", "5", "--database-url", f"sqlite:///{empty}")
    assert result.returncode == 2
    assert "never migrated" in one_line(result)
    assert empty.stat().st_size == 0, "export only reads"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty.db"]
