"""The layers of ARCHITECTURE.md, enforced on the imports of each layer."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "telesnap"

# For each layer, the telesnap layers and third-party packages it must never import.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "game": (
        "telesnap.storage",
        "telesnap.services",
        "telesnap.bot",
        "telesnap.emulator",
        "telesnap.support",
    ),
    # The small mechanisms every other layer uses know none of them.
    "support": (
        "telesnap.game",
        "telesnap.storage",
        "telesnap.services",
        "telesnap.bot",
        "telesnap.emulator",
        "telesnap.sandbox",
        "telesnap.app",
        "telesnap.cli",
        "telegram",
    ),
    "storage": (
        "telesnap.coordination",
        "telesnap.services",
        "telesnap.bot",
        "telesnap.emulator",
        "telegram",
    ),
    # How workers share the work: storage's engine below it, nothing of what uses it.
    "coordination": (
        "telesnap.game",
        "telesnap.services",
        "telesnap.bot",
        "telesnap.emulator",
        "telesnap.sandbox",
        "telegram",
    ),
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
# Within bot/ and services/, each sub-package never imports the sibling sub-packages named:
# a press flows ingress -> handlers -> (referee) -> services -> delivery, and render is used
# by all of them but uses none of them.
FORBIDDEN_SIBLINGS: dict[str, tuple[str, ...]] = {
    "bot/render": ("ingress", "handlers", "referee", "delivery"),
    "bot/delivery": ("ingress", "handlers", "referee"),
    "bot/referee": ("handlers", "delivery"),
    "bot/ingress": ("delivery", "referee"),
    "services/stats": ("play", "outbox", "timers"),
    "services/outbox": ("timers", "stats"),
    "services/timers": ("stats",),
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


@pytest.mark.parametrize("package", sorted(FORBIDDEN_SIBLINGS))
def test_a_sub_package_imports_none_of_the_siblings_above_it(package: str) -> None:
    layer, _, _ = package.partition("/")
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for module in modules_of(path)
        for sibling in FORBIDDEN_SIBLINGS[package]
        if _violates(module, f"telesnap.{layer}.{sibling}")
    ]
    assert offences == []


def test_every_module_of_bot_and_services_sits_in_a_sub_package_or_is_shared() -> None:
    """bot/ has no loose modules; services/ keeps only what every use case shares at its top."""
    assert sorted(p.name for p in (PACKAGE / "bot").glob("*.py")) == ["__init__.py"]
    shared = {p.stem for p in (PACKAGE / "services").glob("*.py")} - {"__init__"}
    assert shared <= SHARED_SERVICES, shared - SHARED_SERVICES


SHARED_SERVICES = {
    "types", "views", "ports", "settings", "chat_settings", "inbox", "privacy", "notify",
    "housekeeping",
}  # fmt: skip
"""The services' top level: the shared types and views, and the use cases of one module each."""


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
    """Every ``x._name`` in the code where ``x`` is not ``self``, ``cls`` or ``super()``.

    ``super()._name`` is an override's own call to the method it extends (a
    library's private seam: its module says so, and a test pins it).
    """
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        and not _is_super(node.value)
    ]


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


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
        if _violates(module, "telesnap.services.play.store")
    ]
    for path in layer_files("bot"):
        tree = parsed(path)
        offences += [f"{path.name} uses {use}" for use in others_private_attributes(tree)]
        if "cached" in attribute_names(tree):
            offences.append(f"{path.name} looks a game up in the store's cache")
    assert layer_files("bot"), "the bot layer has no modules"
    assert offences == []


DELIVERY_NEVER_IMPORTS = (
    "telesnap.services.play",
    "telesnap.storage",
    "telesnap.game",
    "telegram.ext",
)
"""The senders show the outbox's rows and say what they are given: no store, no game."""


def test_the_senders_know_neither_the_games_nor_the_handlers() -> None:
    offences = [
        f"{path.name} imports {module}"
        for path in sorted((PACKAGE / "bot" / "delivery").glob("*.py"))
        for module in modules_of(path)
        for prefix in DELIVERY_NEVER_IMPORTS
        if _violates(module, prefix)
    ]
    assert offences == []


def test_the_wiring_builds_the_runtimes_parts() -> None:
    """app.py builds the senders, their pace and the referee; the runtime only holds them."""
    parts = {"Senders", "Pacer", "HeadShow", "RaceReferee"}
    assert parts & called_names(parsed(PACKAGE / "bot" / "handlers" / "runtime.py")) == set()
    assert parts <= called_names(parsed(PACKAGE / "app.py"))


SENDING = {
    "send_message",
    "edit_message_text",
    "edit_message_reply_markup",
    "edit_message_media",
    "send_photo",
    "send_animation",
    "send_document",
    "delete_message",
}
"""The Bot API's calls that put something in a chat (counted in its flood limits)."""


def test_one_send_path_every_message_goes_through_a_chats_sender() -> None:
    """Only bot/delivery/ calls the Bot API to post or edit: every message takes its pace."""
    offences = [
        f"{path.relative_to(PACKAGE.parent)} calls .{name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not _violates(_module_of(path), "telesnap.bot.delivery")
        and not _violates(_module_of(path), "telesnap.emulator")
        for name in sorted(attribute_names(parsed(path)) & SENDING)
    ]
    assert offences == []


@pytest.mark.parametrize(
    "handlers", ["handlers/commands.py", "handlers/buttons.py", "handlers/actions.py"]
)
def test_the_handlers_say_things_only_through_the_runtime(handlers: str) -> None:
    """What a change shows is in the outbox; a handler says the rest with ``runtime.say``."""
    path = PACKAGE / "bot" / handlers
    offences = [
        f"imports {module}"
        for module in modules_of(path)
        if _violates(module, "telesnap.bot.delivery")
    ]
    offences += [
        f"uses .{name}" for name in sorted(attribute_names(parsed(path)) & {"senders", "post"})
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


# -- the game store only emits; handlers do the rest (services/play/events.py) ------------------


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
    store = PACKAGE / "services" / "play" / "store.py"
    assert "telesnap.services.stats.recorder" not in modules_of(store)
    called = {
        node.attr
        for node in ast.walk(ast.parse(store.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
    }
    assert "after_change" not in called  # the timer planning is an event handler's
    recorder_users = [
        path.name
        for path in layer_files("services")
        if "telesnap.services.stats.recorder" in modules_of(path)
    ]
    assert recorder_users == ["events.py"]


def test_nothing_takes_the_planner_or_the_stats_recorder_from_the_store_module() -> None:
    handled_elsewhere = {"TimerPlanner", "record_game_result", "record_summary"}
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {name} from the store"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name in _names_imported_from(path, "telesnap.services.play.store") & handled_elsewhere
    ]
    assert offences == []
    assert _names_imported_from(
        PACKAGE / "services" / "play" / "lobby.py", "telesnap.services.play.store"
    )


# -- a press: one service call, which says up front what it needs (issue 12) ---------------

HANDLER_MODULES = (
    "handlers/actions.py",
    "handlers/buttons.py",
    "handlers/commands.py",
    "handlers/settings.py",
    "handlers/stats.py",
)
SERVICE_HOLDERS = {"lobby", "play", "races", "settings", "service", "_timers", "_housekeeping"}
"""The names the bot layer reaches its services by (``runtime.lobby``, ``stats_bot.service``...)."""
WAITS_FOR_ITS_RACE = {"flip"}
"""A flip refused while a race collects waits for the referee and flips again: the one
function that calls the services more than once on its way (services/play/service.py decides it)."""


Functions = dict[str, ast.FunctionDef | ast.AsyncFunctionDef]


def _service_calls(node: ast.AST, helpers: Functions) -> int:
    """How many service calls (``await x.lobby.start(...)``, or a lambda's) ``node`` makes.

    A call of one of the module's own ``helpers`` counts the calls it makes.
    """
    count = 0
    for part in ast.walk(node):
        call = part.value if isinstance(part, ast.Await) else getattr(part, "body", None)
        if not isinstance(part, ast.Await | ast.Lambda) or not isinstance(call, ast.Call):
            continue
        called = call.func
        if isinstance(called, ast.Attribute) and isinstance(called.value, ast.Attribute):
            count += called.value.attr in SERVICE_HOLDERS
        elif isinstance(called, ast.Name) and called.id in helpers:
            helper = helpers[called.id]
            others = {name: f for name, f in helpers.items() if name != called.id}
            count += most_service_calls_on_a_path(helper.body, others)
    return count


def most_service_calls_on_a_path(statements: list[ast.stmt], helpers: Functions) -> int:
    """The most service calls one run through ``statements`` makes (branches: alternatives)."""
    ended, going_on = _paths(statements, helpers)
    return max(count for count in (ended, going_on) if count is not None)


def _paths(statements: list[ast.stmt], helpers: Functions) -> tuple[int | None, int | None]:
    """The most calls of the paths that return (or raise) inside, and of those that go on."""
    ended: int | None = None
    going_on: int | None = 0

    def end(count: int | None) -> None:
        nonlocal ended
        if count is not None:
            ended = count if ended is None else max(ended, count)

    def plus(count: int | None, more: int | None) -> int | None:
        return None if count is None or more is None else count + more

    for statement in statements:
        if going_on is None:
            break
        if isinstance(statement, ast.If):
            going_on += _service_calls(statement.test, helpers)
            branches = [_paths(statement.body, helpers), _paths(statement.orelse, helpers)]
        elif isinstance(statement, ast.Try):
            body = _paths(statement.body, helpers)
            handlers = [_paths(handler.body, helpers) for handler in statement.handlers]
            # A handler may run after any part of the body: count the whole body before it.
            whole_body = max(count for count in body if count is not None)
            branches = [body] + [(plus(whole_body, e), plus(whole_body, g)) for e, g in handlers]
            finally_calls = most_service_calls_on_a_path(statement.finalbody, helpers)
            branches = [(plus(e, finally_calls), plus(g, finally_calls)) for e, g in branches]
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            continue  # a nested function is checked on its own
        else:
            count = going_on + _service_calls(statement, helpers)
            if isinstance(statement, ast.Return | ast.Raise):
                end(count)
                going_on = None
            else:
                going_on = count
            continue
        before = going_on
        for branch_ended, _ in branches:
            end(plus(before, branch_ended))
        continuing = [plus(before, g) for _, g in branches if g is not None]
        going_on = max((c for c in continuing if c is not None), default=None)
    return ended, going_on


def functions_of(tree: ast.AST) -> Functions:
    """Every function and method defined in ``tree``, by name."""
    return {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


@pytest.mark.parametrize("handlers", HANDLER_MODULES)
def test_a_handler_makes_one_service_call_on_its_way(handlers: str) -> None:
    functions = functions_of(parsed(PACKAGE / "bot" / handlers))
    for name in WAITS_FOR_ITS_RACE:  # checked by nothing here, nor counted where it is used
        functions.pop(name, None)
    offences = [
        f"{name} calls the services {count} times on one path"
        for name, function in functions.items()
        if (count := most_service_calls_on_a_path(function.body, functions)) > 1
    ]
    assert offences == []


def test_the_health_checks_get_their_probes_from_the_wiring() -> None:
    """bot/ingress/health.py runs the probes app.py hands it: it reaches no database of its own."""
    found = modules_of(PACKAGE / "bot" / "ingress" / "health.py")
    offences = [
        module
        for module in found
        for prefix in ("telesnap.storage", "telesnap.services", "sqlalchemy")
        if _violates(module, prefix)
    ]
    assert offences == []


# -- one ordered place (issue 12, issue 13) ---------------------------------------------------


def _all_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_updates_reach_the_handlers_only_from_the_inbox_dispatcher() -> None:
    """bot/ingress/dispatcher.py alone runs updates through python-telegram-bot's dispatch."""
    offences = [
        path.name
        for path in layer_files("bot")
        if "process_update" in attribute_names(parsed(path)) and path.name != "dispatcher.py"
    ]
    offences += [
        f"{path.name} orders updates with python-telegram-bot's processor"
        for path in layer_files("bot")
        if {"concurrent_updates", "BaseUpdateProcessor"} & _names_used(parsed(path))
    ]
    assert offences == []


def test_the_path_counter_takes_branches_as_alternatives() -> None:
    source = (
        "async def f(runtime):\n"
        "    if a:\n"
        "        await runtime.lobby.join(1)\n"
        "    else:\n"
        "        await runtime.lobby.leave(1)\n"
        "    await runtime.presenter.remember_language(1)\n"
        "async def g(runtime):\n"
        "    await runtime.lobby.open(1)\n"
        "    await runtime.settings.show(1)\n"
        "async def h(runtime):\n"
        "    await f(runtime)\n"
        "    await runtime.play.flip(1)\n"
        "async def i(runtime):\n"
        "    if a:\n"
        "        await runtime.lobby.join(1)\n"
        "        return\n"
        "    await runtime.lobby.leave(1)\n"
        "async def j(runtime):\n"
        "    await retried(lambda admin: runtime.lobby.start(admin))\n"
        "    await runtime.settings.show(1)\n"
    )
    functions = functions_of(ast.parse(source))
    counts = {
        name: most_service_calls_on_a_path(f.body, functions) for name, f in functions.items()
    }
    assert counts == {"f": 1, "g": 2, "h": 2, "i": 1, "j": 2}


MANAGERS_ACTIONS = {"play/lobby.py": ("start", "end", "kick"), "chat_settings.py": ("change",)}


def test_a_managers_action_takes_an_admin_check_not_an_answer() -> None:
    """The service asks when it needs to (services/play/managers.py); the bot never retries."""
    for module, actions in MANAGERS_ACTIONS.items():
        methods = {
            node.name: node
            for node in ast.walk(parsed(PACKAGE / "services" / module))
            if isinstance(node, ast.AsyncFunctionDef)
        }
        for action in actions:
            arguments = {a.arg: a for a in methods[action].args.kwonlyargs}
            annotation = arguments["is_admin"].annotation
            assert annotation is not None, action
            assert ast.unparse(annotation) == "AdminCheck", action
    for path in layer_files("bot"):
        if path.name == "texts.py":  # the refusals' wording
            continue
        mentioned = attribute_names(parsed(path)) & {"NOT_CREATOR", "NOT_ADMIN"}
        assert mentioned == set(), f"{path.name} acts on a manager's refusal"


def test_the_services_write_and_read_operations_only_through_the_history_repository() -> None:
    """An operation is turned into its stored JSON and back in storage/repositories/history.py.

    A replay file is the stored JSON itself, so services/stats/audit.py reads it too, and an
    outbox row stores its board's operations the same way (services/views.py).
    """
    codec = {"operation_to_json", "operation_from_json"}
    allowed = {
        "telesnap.storage.repositories.history",
        "telesnap.services.stats.audit",
        # Reads back one stored race result by its seq; its write paths are being reworked.
        "telesnap.services.play.races",
        # A durable outbox row carries the operations its board shows, in the same stored JSON.
        "telesnap.services.views",
    }
    offences = [
        f"{_module_of(path)} uses {name}"
        for layer in ("services", "storage", "bot")
        for path in layer_files(layer)
        if _module_of(path) not in allowed
        for name in sorted(codec & _used_names(parsed(path)))
    ]
    assert offences == []


def _names_used(tree: ast.AST) -> set[str]:
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return names | attribute_names(tree)


def test_there_is_one_lock_per_topic_and_the_game_store_holds_it() -> None:
    """Keyed locks are built in services/play/store.py only; the bot layer takes no topic lock."""
    offences = [
        f"{path.relative_to(PACKAGE.parent)} builds keyed locks"
        for path in _all_files()
        if "KeyedLocks" in called_names(parsed(path)) and path.name != "store.py"
    ]
    offences += [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in layer_files("bot")
        for module in modules_of(path)
        if _violates(module, "telesnap.services.play.locks")
    ]
    assert offences == []


def _used_names(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def test_the_bot_layer_reaches_the_inbox_through_its_service_only() -> None:
    """The claims (advisory locks, LISTEN) are the coordination's; the bot reaches no storage."""
    offences = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in layer_files("bot")
        for module in modules_of(path)
        if _violates(module, "telesnap.storage")
    ]
    assert offences == []


def test_the_outbox_rows_have_one_home_in_the_services() -> None:
    """Only the outbox uses outbox rows: services/outbox/ (service.py reads and settles them;
    rows.py writes the lobby and notice rows and reads every kind back; record.py the boards).

    The other services write a lobby or a notice through outbox/rows.py; the bot
    renders what it hands out.
    """
    offences = [
        f"{path.relative_to(PACKAGE.parent)} uses uow.outbox"
        for path in layer_files("services")
        if path.parent != PACKAGE / "services" / "outbox"
        and any(
            isinstance(node, ast.Attribute)
            and node.attr == "outbox"
            and isinstance(node.value, ast.Name)
            and node.value.id == "uow"
            for node in ast.walk(parsed(path))
        )
    ]
    offences += [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in layer_files("bot")
        for module in modules_of(path)
        if _violates(module, "telesnap.storage")
    ]
    assert offences == []


def test_the_topic_key_has_one_name_and_one_home() -> None:
    """A chat topic's key is services/types.py's Topic: no other alias, class or helper."""
    offences = []
    for path in _all_files():
        for node in ast.walk(parsed(path)):
            defined = None
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                defined = node.name
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                defined = node.targets[0].id
            if defined in ("TopicKey", "topic_key"):
                offences.append(f"{path.relative_to(PACKAGE.parent)} defines {defined}")
            if defined == "Topic" and path != PACKAGE / "services" / "types.py":
                offences.append(f"{path.relative_to(PACKAGE.parent)} defines Topic")
    assert offences == []


def test_the_flood_limit_windows_are_built_in_one_place() -> None:
    """bot/delivery/pace.py counts every send (alone, or shared by workers); nothing else does."""
    offences = [
        f"{path.relative_to(PACKAGE.parent)} builds {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "bot" / "delivery" / "pace.py"
        for name in called_names(parsed(path)) & {"RollingWindow", "Pace"}
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


def test_one_module_decides_how_the_workers_share_the_work() -> None:
    """coordination/ alone asks whether the database is SQLite (one process) or not."""
    askers = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "is_sqlite"
            for node in ast.walk(parsed(path))
        )
    )
    assert askers == ["telesnap/coordination/__init__.py"]
