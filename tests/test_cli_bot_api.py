"""``telesnap run`` meeting a Bot API that refuses it: one line and exit code 2, never a loop.

Each case runs the real entry point against a real ``telesnap emulator`` process (or a web
server that is no Bot API at all), with ``TELESNAP_LOG_LEVEL=ERROR`` so that stderr holds only
what went wrong.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.test_cli_errors import closed_port, one_line, telesnap

EMULATOR_TOKEN = "123456789:TEST-telesnap-emulator-token"
SECRET = "s" * 40


@pytest.fixture(scope="module")
def emulator_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``telesnap emulator`` process, up once it has printed its token line."""
    port = closed_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "telesnap", "emulator", "--port", str(port), "--no-flood-limits"],
        cwd=tmp_path_factory.mktemp("emulator"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:  # its last start line says the token: it is listening
            if line.startswith("bot token:"):
                break
        else:
            pytest.fail(f"the emulator exited with code {process.wait()}")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait()
        process.stdout.close()


def web_server_answering(status: int) -> type[BaseHTTPRequestHandler]:
    """A web server's HTML page with ``status``, whatever is asked."""

    class Page(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = b"<!DOCTYPE html><html><body><h1>Error response</h1></body></html>"
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer  # noqa: N815 (the names http.server calls)

        def log_message(self, *arguments: object) -> None:
            pass

    return Page


@pytest.fixture
def not_a_bot_api(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a web server answering every request with the parametrized status's page."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), web_server_answering(request.param))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def bot(
    folder: Path, *arguments: str, api_url: str, token: str
) -> subprocess.CompletedProcess[str]:
    return telesnap(
        folder,
        "run",
        *arguments,
        TELESNAP_TOKEN=token,
        TELESNAP_API_URL=api_url,
        TELESNAP_WEBHOOK_SECRET=SECRET,
        TELESNAP_FLOOD_CONTROL="off",
        TELESNAP_LOG_LEVEL="ERROR",
    )


def refusal(api_url: str) -> str:
    """How a refused ``getMe`` begins: it names the token and the URL, both suspects."""
    return f"telesnap: TELESNAP_TOKEN was refused by the Bot API server at {api_url} ("


@pytest.mark.parametrize(
    ("not_a_bot_api", "status"),
    [
        (403, "Forbidden (403)"),
        (404, "Not Found (404)"),
        (405, "Method Not Allowed (405)"),
        (409, "Conflict (409)"),
        (501, "Not Implemented (501)"),
    ],
    indirect=["not_a_bot_api"],
)
def test_a_server_that_is_no_bot_api_is_one_line_naming_both_suspects(
    tmp_path: Path, not_a_bot_api: str, status: str
) -> None:
    """Whatever status its page comes with, waiting changes nothing (a gateway's 502-504 page
    alone is waited out: a proxy answers so while the Bot API behind it restarts)."""
    result = bot(tmp_path, api_url=not_a_bot_api, token=EMULATOR_TOKEN)
    line = one_line(result)
    assert result.returncode == 2
    assert line == (
        f"{refusal(not_a_bot_api)}{status}, in an answer that is not JSON),"
        " or TELESNAP_API_URL is not the root of a Bot API server"
    )


def test_a_refused_token_is_one_line_naming_both_suspects_but_not_the_token(
    tmp_path: Path, emulator_url: str
) -> None:
    result = bot(tmp_path, api_url=emulator_url, token="123456789:not-the-emulators")
    line = one_line(result)
    assert result.returncode == 2
    assert line.startswith(refusal(emulator_url))
    assert line.endswith("or TELESNAP_API_URL is not the root of a Bot API server")
    assert "not-the-emulators" not in line


def test_a_webhook_url_the_bot_api_refuses_is_one_line_in_its_words(
    tmp_path: Path, emulator_url: str
) -> None:
    listen = f"127.0.0.1:{closed_port()}"
    arguments = ("--webhook-url", "https://example.org/hook", "--listen", listen)
    result = bot(tmp_path, *arguments, api_url=emulator_url, token=EMULATOR_TOKEN)
    line = one_line(result)
    assert result.returncode == 2
    assert line == (
        "telesnap: --webhook-url https://example.org/hook was refused by the Bot API: Bad webhook:"
        " the emulator delivers updates only to this machine (localhost, 127.0.0.1 or ::1),"
        " not to example.org"
    )


def test_workers_whose_first_start_is_refused_stop_the_supervisor(
    tmp_path: Path, emulator_url: str
) -> None:
    port = closed_port()
    arguments = ("--webhook-url", f"http://127.0.0.1:{port}/telegram", "--listen")
    result = bot(
        tmp_path,
        *arguments,
        f"127.0.0.1:{port}",
        "--workers",
        "1",
        api_url=emulator_url,
        token="123456789:not-the-emulators",
    )
    assert result.returncode == 2
    worker_line, supervisor_line = result.stderr.strip().splitlines()
    assert worker_line.startswith(refusal(emulator_url))
    assert supervisor_line == (
        f"telesnap: worker 0 (port {port}) stopped: it refused its settings"
        " (the line above says why); every worker is stopped"
    )


class NoBotApi(BaseHTTPRequestHandler):
    """A JSON API that is no Bot API: ``getMe`` answers something else than a bot."""

    def do_POST(self) -> None:
        body = b'{"ok": true, "result": {"hello": 1}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments: object) -> None:
        pass


def test_a_json_api_whose_get_me_is_no_bot_is_one_line(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), NoBotApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        result = bot(tmp_path, api_url=url, token=EMULATOR_TOKEN)
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 2
    assert one_line(result) == (
        f"telesnap: TELESNAP_API_URL ({url}) answers getMe with something that is no bot:"
        " it is not the root of a Bot API server"
    )


def test_a_webhook_port_in_use_is_one_line_naming_the_option(
    tmp_path: Path, emulator_url: str
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        arguments = (
            "--webhook-url",
            f"http://127.0.0.1:{port}/hook",
            "--listen",
            f"127.0.0.1:{port}",
        )
        result = bot(tmp_path, *arguments, api_url=emulator_url, token=EMULATOR_TOKEN)
    line = one_line(result)
    assert line.startswith(f"telesnap: cannot listen on 127.0.0.1:{port} (--listen): ")
    assert "in use" in line


def test_a_webhook_url_holding_the_token_is_never_printed_with_it(
    tmp_path: Path, emulator_url: str
) -> None:
    """Old guides put the token in the webhook's path: a refusal quotes the URL, masked."""
    listen = f"127.0.0.1:{closed_port()}"
    hook = f"https://example.org/{REAL_LOOKING_TOKEN}"
    arguments = ("--webhook-url", hook, "--listen", listen)
    line = one_line(bot(tmp_path, *arguments, api_url=emulator_url, token=EMULATOR_TOKEN))
    assert line.startswith("telesnap: --webhook-url https://example.org/123456789:*** was refused")
    assert REAL_LOOKING_TOKEN.partition(":")[2] not in line


REAL_LOOKING_TOKEN = "123456789:AAEhBOweik6ad9r_QXMENQjcrG2vt0o5TZw"
"""A token as @BotFather gives them: the bot's id, a colon, 35 characters."""


def test_an_api_url_holding_the_token_is_refused_without_printing_it(tmp_path: Path) -> None:
    """Telegram's documents write the method URL as api.telegram.org/bot<token>/: the root is
    what is wanted."""
    url = f"https://api.telegram.org/bot{REAL_LOOKING_TOKEN}"
    result = telesnap(tmp_path, "db", "upgrade", TELESNAP_API_URL=url)
    line = one_line(result)
    assert result.returncode == 2
    assert line == (
        "telesnap: TELESNAP_API_URL must be the Bot API server's root, without /bot and the "
        "token (like https://api.telegram.org): the token goes in TELESNAP_TOKEN"
    )
