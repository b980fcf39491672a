"""The README's two commands are the ones CI runs, word for word."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_command(marker: str) -> str:
    """The one-line shell command in the fenced block after ``<!-- readme:marker -->``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- readme:{marker} -->\s*```sh\n(.+?)\n```", text)
    assert match, f"README.md has no block marked readme:{marker}"
    return match.group(1).strip()


def test_ci_installs_and_runs_exactly_as_the_readme_says() -> None:
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f'bash -c "{readme_command("install-and-run")}"' in ci_script


def test_ci_runs_the_readme_test_command() -> None:
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_command("test") in ci_lines
