"""The supervisor of ``telesnap run --workers`` when it cannot do its job."""

from __future__ import annotations

import logging

import pytest

from telesnap.app import Webhook
from telesnap.cli import workers
from telesnap.cli.workers import Supervisor, worker_specs


async def test_a_worker_that_cannot_be_started_stops_the_supervisor_with_a_logged_failure(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(workers.WorkerSpec, "command", lambda self: ["/nonexistent/telesnap"])
    specs = worker_specs(Webhook("https://x/telegram", "127.0.0.1", 8443, "s"), 2, resume=True)
    with caplog.at_level(logging.ERROR, logger="telesnap.cli.workers"):
        assert await Supervisor(specs).run() is False
    assert "worker 0: could not be kept running; stopping" in caplog.text


def test_the_ready_url_of_a_worker_listening_on_every_address_is_on_loopback() -> None:
    (spec,) = worker_specs(Webhook("https://x/t", "0.0.0.0", 8443, "s"), 1, resume=False)
    assert spec.ready_url == "http://127.0.0.1:8443/ready"
    (spec,) = worker_specs(Webhook("https://x/t", "::1", 8443, "s"), 1, resume=False)
    assert spec.ready_url == "http://[::1]:8443/ready"
