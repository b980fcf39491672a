"""The webhook secret: from the environment or a file, long enough, never on a command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from telesnap.app import Webhook
from telesnap.cli import build_parser
from telesnap.cli.run import webhook_from
from telesnap.cli.workers import worker_specs
from telesnap.config import ConfigError, load_settings

TOKEN = {"TELESNAP_TOKEN": "123:abc"}
SECRET = "x" * 40


def run_arguments(*extra: str) -> list[str]:
    return ["run", "--webhook-url", "https://bot.example/telegram", *extra]


def test_the_secret_comes_from_the_environment() -> None:
    settings = load_settings({**TOKEN, "TELESNAP_WEBHOOK_SECRET": SECRET}, env_file=None)
    webhook = webhook_from(build_parser().parse_args(run_arguments()), settings)
    assert webhook is not None
    assert webhook.secret == SECRET
    assert SECRET not in repr(settings)


def test_the_secret_comes_from_a_file(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    settings = load_settings(TOKEN, env_file=None)
    args = build_parser().parse_args(run_arguments("--webhook-secret-file", str(secret_file)))
    webhook = webhook_from(args, settings)
    assert webhook is not None
    assert webhook.secret == SECRET
    from_variable = load_settings(
        {**TOKEN, "TELESNAP_WEBHOOK_SECRET_FILE": str(secret_file)}, env_file=None
    )
    assert from_variable.webhook_secret == SECRET


def test_a_short_secret_is_refused_with_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="has 1 characters: it must have at least 32"):
        load_settings({**TOKEN, "TELESNAP_WEBHOOK_SECRET": "s"}, env_file=None)


def test_a_secret_of_the_right_length_with_a_wrong_character_names_the_character() -> None:
    secret = "a" * 39 + "!"
    with pytest.raises(ConfigError) as raised:
        load_settings({**TOKEN, "TELESNAP_WEBHOOK_SECRET": secret}, env_file=None)
    assert "has 40 characters" not in str(raised.value), "its length is not the fault"
    assert "'!'" in str(raised.value)
    assert secret not in str(raised.value), "a secret is never echoed"


def test_a_webhook_without_a_secret_says_how_to_give_one() -> None:
    settings = load_settings(TOKEN, env_file=None)
    with pytest.raises(ConfigError, match="set TELESNAP_WEBHOOK_SECRET"):
        webhook_from(build_parser().parse_args(run_arguments()), settings)


def test_the_command_line_takes_no_secret() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(run_arguments("--secret", SECRET))


def test_workers_get_the_secret_in_their_environment_not_their_argv() -> None:
    webhook = Webhook("https://bot.example/telegram", "127.0.0.1", 8443, SECRET)
    for spec in worker_specs(webhook, 2, resume=True):
        assert not any(SECRET in argument for argument in spec.command())
        assert spec.environment()["TELESNAP_WEBHOOK_SECRET"] == SECRET
