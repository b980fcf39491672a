"""Mistakes on the ``telesnap`` command line, run as a person runs it: one line, non-zero exit.

Each case runs the real entry point (``python -m telesnap``) in an empty folder,
without ``TELESNAP_*`` variables, and checks what the person reads: the exit
code and the one line on stderr (no traceback), and that nothing was created.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory

from telesnap.cli import build_parser
from telesnap.game import Game, operation_to_json, parse_cards
from telesnap.services.stats.audit import StoredGame, write_document
from telesnap.storage.migrate import alembic_config, upgrade_database

REPOSITORY = Path(__file__).resolve().parents[1]


def telesnap(
    folder: Path,
    *arguments: str,
    process: dict[str, Any] | None = None,
    **variables: str,
) -> subprocess.CompletedProcess[str]:
    """Run ``telesnap ARGUMENTS`` in ``folder`` with only ``variables`` of telesnap's own.

    ``process``: more of ``subprocess.run``'s options (its own stdout, say).
    """
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("TELESNAP_")
    }
    environment.update(variables)
    options: dict[str, Any] = {"capture_output": True, **(process or {})}
    if "stdout" in options:
        options.pop("capture_output")
        options.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "telesnap", *arguments],
        cwd=folder,
        env=environment,
        text=True,
        timeout=120,
        check=False,
        **options,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line of stderr, after checking the exit code says it failed."""
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


@pytest.mark.parametrize(
    "arguments",
    [
        ("sandbox", "--port", "99999"),
        ("sandbox", "--port", "0"),
        ("emulator", "--port", "65536"),
        ("run", "--listen", "127.0.0.1:99999"),
    ],
)
def test_a_port_out_of_range_is_one_line(tmp_path: Path, arguments: tuple[str, ...]) -> None:
    line = one_line(telesnap(tmp_path, *arguments))
    assert "1 to 65535" in line
    assert arguments[-1] in line
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_postgresql_names_the_host_and_what_to_check(tmp_path: Path) -> None:
    port = closed_port()
    url = f"postgresql://postgres@127.0.0.1:{port}/games"
    for arguments in (("db", "upgrade"), ("export", "--chat", "5", "--database-url", url)):
        line = one_line(telesnap(tmp_path, *arguments, TELESNAP_DATABASE_URL=url))
        assert f"PostgreSQL database games at 127.0.0.1:{port}" in line
        assert "check that the server runs there" in line


def test_a_sqlite_file_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    url = "sqlite:///no-such-folder/games.db"
    line = one_line(telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=url))
    assert line == (
        "telesnap: cannot open the SQLite file no-such-folder/games.db: "
        "the folder no-such-folder does not exist"
    )


def test_the_sandbox_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    arguments = ("sandbox", "--database-url", "sqlite:///no-such-folder/games.db", "--port", "1")
    line = one_line(telesnap(tmp_path, *arguments))
    assert line == (
        "telesnap sandbox: cannot open the SQLite file no-such-folder/games.db: "
        "the folder no-such-folder does not exist"
    )
    assert list(tmp_path.iterdir()) == []


def test_replay_and_export_without_a_database_name_it_and_create_nothing(
    tmp_path: Path,
) -> None:
    for arguments in (("replay", "--game", "999"), ("export", "--chat", "12345")):
        line = one_line(telesnap(tmp_path, *arguments))
        assert line.startswith("telesnap: there is no database at telesnap.db")
        assert "sandbox" not in line  # there is no sandbox file to point to
    assert list(tmp_path.iterdir()) == []


def test_replay_and_export_point_to_the_sandboxs_games(tmp_path: Path) -> None:
    sandbox = tmp_path / "telesnap-sandbox.db"
    asyncio.run(upgrade_database(f"sqlite+aiosqlite:///{sandbox}"))
    before = sorted(path.name for path in tmp_path.iterdir())
    hint = (
        "the sandbox keeps its games in telesnap-sandbox.db: "
        "add --database-url sqlite:///telesnap-sandbox.db"
    )
    for arguments in (("replay", "--game", "999"), ("export", "--chat", "12345")):
        line = one_line(telesnap(tmp_path, *arguments))
        assert "there is no database at telesnap.db" in line
        assert line.endswith(hint)
        assert f"\n    {line}\n" in (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert sorted(path.name for path in tmp_path.iterdir()) == before


def test_an_unknown_chat_or_game_is_a_refusal_naming_the_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    asyncio.run(upgrade_database(url))
    line = one_line(telesnap(tmp_path, "export", "--chat", "12345", "--database-url", url))
    assert line == f"telesnap: chat 12345 has no ended games in the SQLite file {tmp_path}/games.db"
    line = one_line(telesnap(tmp_path, "replay", "--game", "999", "--database-url", url))
    assert line == f"telesnap: there is no game 999 in the SQLite file {tmp_path}/games.db"


def test_a_database_that_was_never_migrated_is_named(tmp_path: Path) -> None:
    (tmp_path / "telesnap.db").touch()
    line = one_line(telesnap(tmp_path, "replay", "--game", "1"))
    assert line == (
        "telesnap: the SQLite file telesnap.db holds no telesnap games "
        "(never migrated: is it the right database?)"
    )


def test_the_sandboxs_saved_chats_are_not_committed() -> None:
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "telesnap-sandbox.db.sandbox.json"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
    )
    if checked.returncode == 128:
        pytest.skip(f"not a git checkout: {checked.stderr.strip()}")
    assert checked.stdout.strip() == "telesnap-sandbox.db.sandbox.json"


def test_ids_beyond_what_a_database_holds_are_unknown_not_a_traceback(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    asyncio.run(upgrade_database(url))
    huge = "99999999999999999999"
    line = one_line(telesnap(tmp_path, "replay", "--game", huge, "--database-url", url))
    assert line == f"telesnap: there is no game {huge} in the SQLite file {tmp_path}/games.db"
    line = one_line(telesnap(tmp_path, "export", "--chat", f"-{huge}", "--database-url", url))
    where = f"the SQLite file {tmp_path}/games.db"
    assert line == f"telesnap: chat -{huge} has no ended games in {where}"


@pytest.mark.parametrize("players", ["1", "13"])
def test_simulate_names_the_players_a_game_takes(tmp_path: Path, players: str) -> None:
    line = one_line(telesnap(tmp_path, "simulate", "--players", players, "--games", "1"))
    assert line == (
        f"telesnap simulate: argument --players: Snap needs 2 to 12 players, not {players} "
        "(--help lists the options)"
    )


def test_replay_of_a_file_it_cannot_read_says_which_and_why(tmp_path: Path) -> None:
    line = one_line(telesnap(tmp_path, "replay", "no-such-game.tsv"))
    assert line == "telesnap: cannot read no-such-game.tsv: No such file or directory"
    line = one_line(telesnap(tmp_path, "replay", str(tmp_path)))
    assert line == f"telesnap: cannot read {tmp_path}: Is a directory"


def replay_document() -> str:
    """A short game's /replay ID file document."""
    game = Game()
    game.deal(2, dealer=1, deck=parse_cards("7♠ 7♥ K♣ 2♦"))
    for seat in (0, 1, 0):
        game.flip(seat)
    operations = tuple(
        (seq, op.kind, operation_to_json(op)) for seq, op in enumerate(game.history, start=1)
    )
    return write_document(StoredGame({"game_id": 1}, operations), ["telesnap game 1"])


def test_replay_of_a_document_cut_short_names_the_file_and_the_line(tmp_path: Path) -> None:
    text = replay_document()
    (tmp_path / "whole.tsv").write_text(text, encoding="utf-8")
    whole = telesnap(tmp_path, "replay", "whole.tsv")
    assert whole.returncode == 0, whole.stderr
    cut = text[: len(text) - 20]
    (tmp_path / "cut.tsv").write_text(cut, encoding="utf-8")
    result = telesnap(tmp_path, "replay", "cut.tsv")
    assert result.returncode == 1
    last = len(cut.splitlines())
    assert one_line(result) == f"telesnap: cut.tsv line {last}: not a /replay document (cut short?)"
    stored_line = next(n for n, line in enumerate(text.splitlines(), 1) if "stored" in line)
    in_the_header = "\n".join(text.splitlines()[:stored_line])[:-5]
    (tmp_path / "header.tsv").write_text(in_the_header, encoding="utf-8")
    line = one_line(telesnap(tmp_path, "replay", "header.tsv"))
    assert line == f"telesnap: header.tsv line {stored_line}: not a /replay document (cut short?)"


def test_replay_of_a_picture_says_it_is_not_a_text_file(tmp_path: Path) -> None:
    (tmp_path / "snap-game-1.gif").write_bytes(b"GIF89a\x80\x01\xe0\x00\xf7\x00\x00")
    result = telesnap(tmp_path, "replay", "snap-game-1.gif")
    assert result.returncode == 1
    line = one_line(result)
    assert line.startswith("telesnap: snap-game-1.gif is not a text file: ")
    assert "codec" not in line


def test_a_port_in_use_is_one_line_naming_it(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        line = one_line(telesnap(tmp_path, "emulator", "--port", port))
    assert line.startswith("telesnap: ")
    assert port in line
    assert "in use" in line


def test_an_ipv6_host_in_brackets_is_the_host_without_them() -> None:
    arguments = build_parser().parse_args(["run", "--listen", "[::1]:8443"])
    assert arguments.listen == "::1:8443"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://postgres@127.0.0.1:99999/test",
        "postgresql://postgres@127.0.0.1:0/test",
        "postgresql://postgres@127.0.0.1:abc/test",
        "postgresql://postgres@[::1:5432/test",
    ],
)
def test_a_database_url_with_a_bad_port_is_one_line_naming_it(tmp_path: Path, url: str) -> None:
    line = one_line(telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=url))
    assert line.startswith("telesnap: TELESNAP_DATABASE_URL ")
    assert "1 to 65535" in line
    line = one_line(telesnap(tmp_path, "export", "--chat", "5", "--database-url", url))
    assert line.startswith("telesnap: --database-url ")
    assert "1 to 65535" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["sqlite:///", "sqlite:///:memory:"])
def test_an_in_memory_sqlite_database_is_refused(tmp_path: Path, url: str) -> None:
    line = one_line(telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL=url))
    assert line.startswith("telesnap: TELESNAP_DATABASE_URL names an in-memory SQLite database")
    line = one_line(telesnap(tmp_path, "sandbox", "--database-url", url))
    assert line.startswith("telesnap sandbox: --database-url names an in-memory SQLite database")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://127.0.0.1:99999", "http://127.0.0.1:abc", "https://:8081"]
)
def test_a_bot_api_url_with_a_bad_host_or_port_is_one_line(tmp_path: Path, url: str) -> None:
    line = one_line(telesnap(tmp_path, "db", "upgrade", TELESNAP_API_URL=url))
    assert line.startswith("telesnap: TELESNAP_API_URL must be an http:// or https:// URL")
    assert url in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('TELESNAP_TOKEN="123456:secret', " (TELESNAP_TOKEN)"),  # a quote left open
        ("TELESNAP_TOKEN 123456:secret", " (TELESNAP_TOKEN)"),
        ("TELESNAP_DATABASE_URL", " (TELESNAP_DATABASE_URL)"),  # no "=" at all
        ("OTHER_TOOL='x", ""),
    ],
)
def test_a_malformed_env_file_line_stops_the_command_naming_it(
    tmp_path: Path, text: str, named: str
) -> None:
    (tmp_path / ".env").write_text(f"# telesnap\n{text}\nTELESNAP_LOG_LEVEL=INFO\n")
    line = one_line(telesnap(tmp_path, "db", "upgrade"))
    assert line == (
        f"telesnap: .env line 2{named} cannot be read: it must be NAME=VALUE with any quote closed"
    )
    assert [path.name for path in tmp_path.iterdir()] == [".env"]


def test_a_database_from_a_newer_telesnap_is_named_and_left_alone(tmp_path: Path) -> None:
    asyncio.run(upgrade_database(f"sqlite+aiosqlite:///{tmp_path / 'telesnap.db'}"))
    database = sqlite3.connect(tmp_path / "telesnap.db")
    database.execute("UPDATE alembic_version SET version_num = 'f00dfeedbeef'")
    database.commit()
    database.close()
    line = one_line(telesnap(tmp_path, "db", "upgrade"))
    assert line == (
        "telesnap: the SQLite file telesnap.db is at revision f00dfeedbeef, which this telesnap"
        " does not know: made by a newer version?"
    )


def test_a_database_that_is_not_telesnaps_is_named_and_left_alone(tmp_path: Path) -> None:
    database = sqlite3.connect(tmp_path / "telesnap.db")
    database.execute("CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT)")
    database.commit()
    line = one_line(telesnap(tmp_path, "db", "upgrade"))
    assert line == (
        "telesnap: the SQLite file telesnap.db holds tables (games) but no telesnap revision:"
        " it is not telesnap's database"
    )
    tables = database.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    database.close()
    assert tables == [("games",)]


def test_a_sandbox_that_cannot_start_leaves_no_file_behind(tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{closed_port()}/games"
    arguments = ("sandbox", "--database-url", url, "--port", str(closed_port()))
    line = one_line(telesnap(tmp_path, *arguments))
    assert "cannot connect to the PostgreSQL database games" in line
    assert list(tmp_path.iterdir()) == []


NO_SUCH_FOLDER = "sqlite:///no-such-folder/games.db"
"""A database a bot that got past its options' checks stops on at once (no Bot API needed)."""


def test_listen_without_a_webhook_url_is_refused(tmp_path: Path) -> None:
    line = one_line(
        telesnap(
            tmp_path,
            "run",
            "--listen",
            "localhost:8443",
            TELESNAP_TOKEN="123456:secret",
            TELESNAP_DATABASE_URL=NO_SUCH_FOLDER,
        )
    )
    assert line == "telesnap: --listen needs --webhook-url (long polling listens nowhere)"


def test_a_webhook_url_without_a_host_is_refused(tmp_path: Path) -> None:
    line = one_line(
        telesnap(
            tmp_path,
            "run",
            "--webhook-url",
            "https://",
            TELESNAP_TOKEN="123456:secret",
            TELESNAP_WEBHOOK_SECRET="s" * 40,
            TELESNAP_DATABASE_URL=NO_SUCH_FOLDER,
        )
    )
    assert line == "telesnap: --webhook-url must be an http(s) URL with a host, not 'https://'"


def test_replay_and_export_agree_on_the_exit_code_of_a_database_they_cannot_use(
    tmp_path: Path,
) -> None:
    unreachable = f"postgresql://postgres@127.0.0.1:{closed_port()}/games"
    for database in ((), ("--database-url", unreachable)):
        for command in (("replay", "--game", "999"), ("export", "--chat", "12345")):
            result = telesnap(tmp_path, *command, *database)
            one_line(result)
            assert result.returncode == 2, (command, database)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("replay", "--game", "abc"), "argument --game: must be a whole number of at least 1"),
        (("run", "--workers", "x"), "argument --workers: must be a whole number of at least 1"),
        (("simulate", "--players", "abc"), "argument --players: must be a whole number"),
        (("simulate", "--tie-window", "x"), "argument --tie-window: must be a whole number"),
    ],
)
def test_a_number_that_is_not_one_reads_well(
    tmp_path: Path, arguments: tuple[str, ...], expected: str
) -> None:
    line = one_line(telesnap(tmp_path, *arguments))
    assert expected in line
    assert f"not {arguments[-1]!r}" in line


def test_a_host_that_does_not_resolve_names_the_option(tmp_path: Path) -> None:
    port = str(closed_port())
    line = one_line(telesnap(tmp_path, "emulator", "--host", "nosuch.invalid", "--port", port))
    assert line.startswith("telesnap: cannot listen on --host nosuch.invalid: ")


def test_a_command_group_without_its_command_names_what_is_missing(tmp_path: Path) -> None:
    result = telesnap(tmp_path, "db")
    assert one_line(result) == (
        "telesnap db: the following arguments are required: COMMAND (--help lists the options)"
    )
    assert result.returncode == 2


def test_ctrl_c_stops_a_command_without_a_traceback(tmp_path: Path) -> None:
    """``simulate`` has no stop of its own: Ctrl-C ends it as a shell expects, with no trace."""
    started = (  # says so once its first game is played: the interrupt comes in the command
        "import sys, telesnap.simulate as s; play = s.play_game\n"
        "def said(*args, **kwargs):\n"
        "    s.play_game = play; print('running', flush=True); return play(*args, **kwargs)\n"
        "s.play_game = said\n"
        "from telesnap.cli import main; sys.exit(main(['simulate', '--games', '100000000']))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", started],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "running\n"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, stderr) == (130, "")


@pytest.mark.parametrize("command", [("replay", "--game", "1"), ("export", "--chat", "-1")])
def test_a_database_at_an_older_revision_is_named_with_the_upgrade(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """A new release installed, and its reads run before the upgrade (they need its tables)."""
    scripts = ScriptDirectory.from_config(alembic_config())
    head = scripts.get_current_head()
    assert head is not None
    before = scripts.get_revision(head).down_revision
    assert isinstance(before, str)
    asyncio.run(upgrade_database(f"sqlite+aiosqlite:///{tmp_path / 'telesnap.db'}", before))
    line = one_line(telesnap(tmp_path, *command))
    assert line == (
        f"telesnap: the SQLite file telesnap.db is at revision {before}, older than this"
        f" telesnap's {head}: run `telesnap db upgrade` (or start the bot, which upgrades it) first"
    )


def test_a_sqlite_file_another_process_holds_says_so(tmp_path: Path) -> None:
    asyncio.run(upgrade_database(f"sqlite+aiosqlite:///{tmp_path / 'telesnap.db'}"))
    holder = sqlite3.connect(tmp_path / "telesnap.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = telesnap(tmp_path, "db", "upgrade")
    finally:
        holder.close()
    line = one_line(result)
    assert result.returncode == 2
    assert line == (
        "telesnap: cannot use the SQLite file telesnap.db (database is locked): another process"
        " holds it (another telesnap running on this file?)"
    )


def test_a_sqlite_path_that_is_a_folder_says_so(tmp_path: Path) -> None:
    (tmp_path / "games").mkdir()
    result = telesnap(tmp_path, "db", "upgrade", TELESNAP_DATABASE_URL="sqlite:///games")
    assert one_line(result) == (
        "telesnap: cannot open the SQLite file games: it is a folder, not a file"
    )
    assert result.returncode == 2


def test_a_sqlite_file_that_cannot_grow_is_one_line_naming_it(tmp_path: Path) -> None:
    """A full disk, as a file-size limit makes it (no privileges needed): no traceback."""

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    result = telesnap(tmp_path, "db", "upgrade", process={"preexec_fn": small_files})
    line = one_line(result)
    assert result.returncode == 2
    assert line.startswith("telesnap: cannot write the SQLite file telesnap.db (")
    assert "): check the free space on its disk and the file's size limits" in line


def test_output_to_a_reader_that_stopped_ends_quietly(tmp_path: Path) -> None:
    """``telesnap simulate --json | head -c 0``: the reader is gone, the command says nothing."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `head` does once it has what it wanted
    try:
        arguments = ("simulate", "--games", "3", "--json")
        result = telesnap(tmp_path, *arguments, process={"stdout": write_end})
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 1


def test_commands_that_never_talk_to_telegram_do_not_read_the_webhook_secret(
    tmp_path: Path,
) -> None:
    """`db upgrade` on a machine whose secret file only the bot's user may read, say."""
    result = telesnap(
        tmp_path, "db", "upgrade", TELESNAP_WEBHOOK_SECRET_FILE=str(tmp_path / "no-such-file")
    )
    assert result.returncode == 0, result.stderr


def test_a_crash_below_python_leaves_its_traceback(tmp_path: Path) -> None:
    """A bus error (SQLite's mapped memory on a file made immutable, say) kills the process
    with no log line; the operator still reads where it died."""
    port = closed_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TELESNAP_")}
    with subprocess.Popen(
        [sys.executable, "-m", "telesnap", "emulator", "--port", str(port)],
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        for line in process.stdout:  # its last start line says the token: it is running
            if line.startswith("bot token:"):
                break
        process.send_signal(signal.SIGBUS)
        process.wait(timeout=60)
        assert "Fatal Python error: Bus error" in process.stderr.read()
