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


# -- the seams inside the bot layer (ARCHITECTURE.md) ---------------------------------------
# That services import nothing of the bot (the presenter included) is checked above.


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def others_private_attributes(tree: ast.AST) -> list[str]:
    """Every ``x._name`` in the code where ``x`` is not ``self`` or ``cls``."""
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]


def attribute_names(tree: ast.AST) -> set[str]:
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def called_names(tree: ast.AST) -> set[str]:
    return {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def test_the_bot_layer_never_reaches_the_game_store() -> None:
    """The cache and the topic locks are the services' business: bot/ sees only their answers."""
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in layer_files("bot")
        for module in modules_of(path)
        if _violates(module, "telesnap.services.store")
    ]
    for path in layer_files("bot"):
        tree = parsed(path)
        offences += [f"{path.name} uses {use}" for use in others_private_attributes(tree)]
        if "cached" in attribute_names(tree):
            offences.append(f"{path.name} looks a game up in the store's cache")
    assert layer_files("bot"), "the bot layer has no modules"
    assert offences == []


PRESENTER_NEVER_IMPORTS = (
    "telesnap.services.store",
    "telesnap.storage",
    "telesnap.game",
    "telegram.ext",
    "telesnap.bot.runtime",
    "telesnap.bot.commands",
    "telesnap.bot.buttons",
    "telesnap.bot.actions",
)
"""The presenter shows services' views: it knows no store, no handler, no runtime."""


def test_the_presenter_knows_neither_the_stores_nor_the_handlers() -> None:
    offences = [
        f"presenter imports {module}"
        for module in modules_of(PACKAGE / "bot" / "presenter.py")
        for prefix in PRESENTER_NEVER_IMPORTS
        if _violates(module, prefix)
    ]
    assert offences == []


def test_the_wiring_builds_the_runtimes_parts() -> None:
    """app.py builds the courier, presenter and referee; the runtime only holds them."""
    parts = {"Courier", "Presenter", "RaceReferee", "BoardTidier", "Outbox"}
    assert parts & called_names(parsed(PACKAGE / "bot" / "runtime.py")) == set()
    assert parts <= called_names(parsed(PACKAGE / "app.py"))


@pytest.mark.parametrize("handlers", ["commands.py", "buttons.py", "actions.py"])
def test_the_handlers_show_things_only_through_the_presenter(handlers: str) -> None:
    path = PACKAGE / "bot" / handlers
    sending = {"telesnap.bot.outbox", "telesnap.bot.courier", "telesnap.bot.posts"}
    offences = [f"imports {module}" for module in modules_of(path) if module in sending]
    offences += [
        f"uses .{name}"
        for name in sorted(attribute_names(parsed(path)) & {"courier", "outbox", "submit"})
    ]
    assert offences == []


def test_the_seam_checkers_see_what_they_look_for() -> None:
    tree = ast.parse("store._games.clear()\nself._own = 1\nx.cached(3)\nRaceReferee(bot)\n")
    assert others_private_attributes(tree) == ["store._games"]
    assert "cached" in attribute_names(tree)
    assert called_names(tree) == {"RaceReferee"}


# One home for each concept (issue 12): a name is put together from its parts in one place.
NAME_FORMATTER = PACKAGE / "services" / "types.py"


def _mentions(node: ast.AST, word: str) -> bool:
    return any(
        (isinstance(part, ast.Name) and word in part.id.lower())
        or (isinstance(part, ast.Attribute) and word in part.attr.lower())
        for part in ast.walk(node)
    )


def name_assemblies(source: str) -> list[int]:
    """Lines where an f-string or a ``join`` builds text from a first and a last name."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        joins = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant)  # str.join, not a SQL join
        )
        if (isinstance(node, ast.JoinedStr) or joins) and all(
            _mentions(node, word) for word in ("first", "last")
        ):
            lines.append(node.lineno)
    return lines


def test_display_names_are_formatted_in_one_place() -> None:
    offences = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != NAME_FORMATTER and not _violates(_module_of(path), "telesnap.emulator")
        for line in name_assemblies(path.read_text(encoding="utf-8"))
    ]
    assert name_assemblies(NAME_FORMATTER.read_text(encoding="utf-8")), "the formatter moved"
    assert offences == []


def test_the_name_check_sees_f_strings_and_joins() -> None:
    source = (
        'a = f"{user.first_name} {user.last_name}"\n'
        'b = " ".join(p for p in (first, last) if p)\n'
        'c = f"{first} {count}"\n'
        "d = select(User.first_name, User.last_name).join(User)\n"
    )
    assert name_assemblies(source) == [1, 2]


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


# -- the game store only emits; handlers do the rest (services/events.py) ------------------


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


def test_the_health_checks_get_their_probes_from_the_wiring() -> None:
    """bot/health.py runs the probes app.py hands it: it reaches no database of its own."""
    found = modules_of(PACKAGE / "bot" / "health.py")
    offences = [
        module
        for module in found
        for prefix in ("telesnap.storage", "telesnap.services", "sqlalchemy")
        if _violates(module, prefix)
    ]
    assert offences == []


def test_the_worker_supervisor_only_starts_processes() -> None:
    """cli/workers.py runs ``telesnap run`` processes: it imports no bot and no database."""
    found = modules_of(PACKAGE / "cli" / "workers.py")
    offences = [
        module
        for module in found
        for prefix in ("telegram", "telesnap.bot", "telesnap.storage", "telesnap.services")
        if _violates(module, prefix)
    ]
    assert offences == []
