"""Hatchling build hook: compile the gettext catalogs when the wheel is built.

Every ``telesnap/locales/<lang>/LC_MESSAGES/*.po`` is compiled with Babel to the
``.mo`` file next to it, in the source tree, and the ``.mo`` files are shipped
in the wheel. So ``pip install .`` gets them inside the package, and
``pip install -e .`` (which imports the package from the source tree) finds them
next to the ``.po`` files. The ``.mo`` files are not committed (.gitignore).

A catalog with a syntax or format error stops the build; fuzzy entries are
left out (gettext then shows the English text), as ``pybabel compile`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

LOCALES = Path("telesnap") / "locales"


def compile_catalogs(root: Path) -> list[Path]:
    """Compile every .po under ``root/telesnap/locales``; return the .mo paths (relative)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    compiled = []
    for po_path in sorted((root / LOCALES).glob("*/LC_MESSAGES/*.po")):
        language = po_path.parent.parent.name
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=language, abort_invalid=True)
        errors = [
            f"{po_path}: {message.id!r}: {error}"
            for message, message_errors in catalog.check()
            for error in message_errors
        ]
        if errors:
            raise RuntimeError("invalid translations:\n" + "\n".join(errors))
        mo_path = po_path.with_suffix(".mo")
        with mo_path.open("wb") as mo_file:
            write_mo(mo_file, catalog, use_fuzzy=False)
        compiled.append(mo_path.relative_to(root))
    return compiled


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the catalogs before the wheel (standard or editable) is built."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile, and make sure the (git-ignored) .mo files go into the wheel."""
        compiled = compile_catalogs(Path(self.root))
        self.app.display_info(f"compiled {len(compiled)} gettext catalogs")
        build_data["artifacts"].extend(path.as_posix() for path in compiled)
