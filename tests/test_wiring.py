"""The wiring in one place: arguments parsed in telesnap/cli, the environment read in config.py."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from telesnap.sandbox.cli import sandbox_settings

PACKAGE = Path(__file__).resolve().parent.parent / "telesnap"


def modules() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def environment_reads(tree: ast.Module) -> list[int]:
    """Lines that read the process environment (``os.environ`` other than a setdefault, getenv)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "getenv":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in ("environ", "getenv") for alias in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            is_environ = isinstance(target, ast.Attribute) and target.attr == "environ"
            # Writing a library's opt-in (PTB_TIMEDELTA) is not reading a setting.
            if is_environ and node.func.attr != "setdefault":
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "environ"
        ):
            lines.append(node.lineno)
    return lines


def test_only_config_reads_the_environment() -> None:
    readers = {
        name: lines
        for name, tree in modules()
        if name != "config.py" and (lines := environment_reads(tree))
    }
    assert readers == {}


def test_the_check_sees_an_environment_read() -> None:
    tree = ast.parse("import os\nport = os.environ.get('TELESNAP_SANDBOX_PORT')\n")
    assert environment_reads(tree) == [2]


def test_only_the_cli_builds_argument_parsers() -> None:
    builders = [
        name
        for name, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in ("ArgumentParser", "add_argument", "add_subparsers")
        and not name.startswith("cli/")
    ]
    assert builders == []


def test_the_composition_root_parses_no_arguments() -> None:
    (tree,) = [tree for name, tree in modules() if name == "app.py"]
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import)]
    imported = {alias.name for node in imports for alias in node.names}
    assert "argparse" not in imported


def test_the_sandbox_logs_warnings_unless_the_environment_says_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.delenv("TELESNAP_LOG_LEVEL", raising=False)
    assert sandbox_settings().log_level == "WARNING"
    monkeypatch.setenv("TELESNAP_LOG_LEVEL", "debug")
    assert sandbox_settings().log_level == "DEBUG"
    (tmp_path / ".env").write_text("TELESNAP_LOG_LEVEL=ERROR\n", encoding="utf-8")
    monkeypatch.delenv("TELESNAP_LOG_LEVEL")
    assert sandbox_settings().log_level == "ERROR"


def test_a_worker_starts_without_the_picture_libraries() -> None:
    # matplotlib alone takes about half a second to import: every start and restart of a
    # worker pays it unless the pictures load it when the first one is drawn.
    libraries = "{'matplotlib', 'PIL'}"
    probe = f"import sys, telesnap.app, telesnap.cli; print(sorted({libraries} & {{*sys.modules}}))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
