"""The architecture of DESIGN.md section 4, enforced on the imports of each layer."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "telesnap"

# For each layer, the telesnap layers and third-party packages it must never import.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "game": ("telesnap.storage", "telesnap.services", "telesnap.bot", "telesnap.emulator"),
    "storage": ("telesnap.services", "telesnap.bot", "telesnap.emulator", "telegram"),
    "services": ("telesnap.bot", "telesnap.emulator", "telegram"),
    "bot": ("telesnap.emulator", "telesnap.sandbox"),
    # The emulator knows neither the bot nor the game (the sandbox wires them together).
    "emulator": (
        "telesnap.game",
        "telesnap.storage",
        "telesnap.services",
        "telesnap.bot",
        "telesnap.sandbox",
        "telesnap.app",
    ),
}


def imported_modules(source: str, package_parts: tuple[str, ...]) -> set[str]:
    """Every module an import statement in ``source`` names, made absolute."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package_parts[: len(package_parts) - node.level + 1])
                names.add(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                names.add(node.module)
    return names


def modules_of(path: Path) -> set[str]:
    package_parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    return imported_modules(path.read_text(encoding="utf-8"), package_parts)


def layer_files(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def _violates(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer: str) -> None:
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in layer_files(layer)
        for module in modules_of(path)
        for prefix in FORBIDDEN[layer]
        if _violates(module, prefix)
    ]
    assert offences == []


def test_game_imports_only_the_standard_library_and_itself() -> None:
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in layer_files("game")
        for module in modules_of(path)
        if module.split(".")[0] not in sys.stdlib_module_names
        and not _violates(module, "telesnap.game")
    ]
    assert layer_files("game"), "the game layer has no modules"
    assert offences == []


def test_the_checker_sees_relative_absolute_and_dotted_imports() -> None:
    source = "from ..storage import models\nimport telegram.ext\nfrom . import cards\n"
    found = imported_modules(source, ("telesnap", "game"))
    assert found == {"telesnap.storage", "telegram.ext", "telesnap.game"}
    assert _violates("telesnap.storage", "telesnap.storage")
    assert not _violates("telesnap.storagex", "telesnap.storage")


def _names_imported_from(path: Path, module: str) -> set[str]:
    """The names ``path`` imports from ``module`` (``from module import name``)."""
    package_parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and imported_modules(
            ast.unparse(node), package_parts
        ) == {module}:
            names.update(alias.name for alias in node.names)
    return names


def test_the_game_store_only_emits_what_happens_when_a_game_changes() -> None:
    store = PACKAGE / "services" / "store.py"
    assert "telesnap.services.stats_recorder" not in modules_of(store)
    called = {
        node.attr
        for node in ast.walk(ast.parse(store.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
    }
    assert "after_change" not in called  # the timer planning is an event handler's
    recorder_users = [
        path.name
        for path in layer_files("services")
        if "telesnap.services.stats_recorder" in modules_of(path)
    ]
    assert recorder_users == ["events.py"]


def test_nothing_takes_the_planner_or_the_stats_recorder_from_the_store_module() -> None:
    handled_elsewhere = {"TimerPlanner", "record_game_result", "record_summary"}
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {name} from the store"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name in _names_imported_from(path, "telesnap.services.store") & handled_elsewhere
    ]
    assert offences == []
    assert _names_imported_from(PACKAGE / "services" / "lobby.py", "telesnap.services.store")
