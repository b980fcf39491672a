"""``telesnap run`` against a web server that is no Bot API: one line and exit code 2.

Whatever status its page comes with (404, 405, 501…), waiting changes nothing; only a gateway's
502, 503 or 504 page is waited out (a proxy answers so while the Bot API behind it restarts).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.test_cli_bot_api import EMULATOR_TOKEN, bot, refusal
from tests.test_cli_errors import one_line


def web_server_answering(status: int) -> type[BaseHTTPRequestHandler]:
    """A web server's HTML page with ``status``, whatever is asked."""

    class Page(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = b"<!DOCTYPE HTML><html><body><h1>Error response</h1></body></html>"
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
def page_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a web server answering every request with the parametrized status."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), web_server_answering(request.param))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("page_server", "status"),
    [(405, "Method Not Allowed (405)"), (501, "Not Implemented (501)")],
    indirect=["page_server"],
)
def test_a_web_server_answering_an_error_page_is_one_line_naming_both_suspects(
    tmp_path: Path, page_server: str, status: str
) -> None:
    result = bot(tmp_path, api_url=page_server, token=EMULATOR_TOKEN)
    line = one_line(result)
    assert result.returncode == 2
    assert line == (
        f"{refusal(page_server)}{status}, in an answer that is not JSON),"
        " or TELESNAP_API_URL is not the root of a Bot API server"
    )
