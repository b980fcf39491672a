"""Derive the Bot API facts the emulator needs from the machine-readable spec.

The source is ``api.json`` of PaulSonOfLars/telegram-bot-api-spec (MIT licence),
Telegram Bot API 10.1; the project keeps a copy in ``../shared/botapi-spec``.
Only facts are kept: each method's name, its parameters (name, accepted types,
required flag) and its return types. The output,
``telesnap/emulator/botapi_methods.json``, is committed; rerun this script when
the spec changes::

    python scripts/derive_botapi.py [path/to/api.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "shared" / "botapi-spec" / "api.json"
OUTPUT = Path(__file__).resolve().parents[1] / "telesnap" / "emulator" / "botapi_methods.json"
SOURCE_NOTE = (
    "Derived by scripts/derive_botapi.py from api.json of PaulSonOfLars/telegram-bot-api-spec "
    "(MIT licence). Facts only: method names, parameter names, types, required flags, returns."
)


def derive(spec: dict[str, Any]) -> dict[str, Any]:
    """Return the compact method table of ``spec`` (the parsed ``api.json``)."""
    methods = {
        name: {
            "returns": method.get("returns", []),
            "params": [
                {"name": field["name"], "types": field["types"], "required": field["required"]}
                for field in method.get("fields", [])
            ],
        }
        for name, method in sorted(spec["methods"].items())
    }
    return {"source": SOURCE_NOTE, "version": spec["version"], "methods": methods}


def render(table: dict[str, Any]) -> str:
    """Serialise ``table`` with one method per line, so diffs stay readable."""
    lines = [
        "{",
        f'"source": {json.dumps(table["source"])},',
        f'"version": {json.dumps(table["version"])},',
        '"methods": {',
    ]
    items = list(table["methods"].items())
    for index, (name, method) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(method, separators=(',', ':'))}{comma}")
    lines.extend(["}", "}"])
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Read the spec named on the command line (or the default) and write the table."""
    spec_path = Path(argv[0]) if argv else DEFAULT_SPEC
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    OUTPUT.write_text(render(derive(spec)), encoding="utf-8")
    print(f"wrote {len(spec['methods'])} methods to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
