"""The derived Bot API data ships inside the package, and the CLI serves."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from telesnap.emulator.spec import load_methods

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "botapi-spec" / "api.json"


def test_method_table_loads_as_package_data() -> None:
    text = resources.files("telesnap.emulator").joinpath("botapi_methods.json").read_text("utf-8")
    table = json.loads(text)
    assert table["version"] == "Bot API 10.1"
    assert "PaulSonOfLars/telegram-bot-api-spec" in table["source"]
    send_message = {p["name"]: p for p in table["methods"]["sendMessage"]["params"]}
    assert send_message["chat_id"] == {
        "name": "chat_id",
        "types": ["Integer", "String"],
        "required": True,
    }
    assert len(load_methods()) == len(table["methods"]) == 180


@pytest.mark.skipif(not SPEC.exists(), reason="the Bot API spec is not checked out")
def test_committed_table_is_what_the_script_derives(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import derive_botapi
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    derived = derive_botapi.render(derive_botapi.derive(json.loads(SPEC.read_text("utf-8"))))
    committed = (ROOT / "telesnap" / "emulator" / "botapi_methods.json").read_text("utf-8")
    assert derived == committed


def test_cli_serves_until_interrupted() -> None:
    code = (
        "import argparse, signal, threading, os\n"
        "from telesnap.emulator import cli\n"
        "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "args = argparse.Namespace(\n"
        "    host='127.0.0.1', port=0, no_flood_limits=True, public_webhooks=False, key_file=None\n"
        ")\n"
        "raise SystemExit(cli.main(args))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=20, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Bot API emulator on http://127.0.0.1:" in done.stdout
