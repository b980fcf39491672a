"""The sandbox interface without a browser: clock, races, robots, people, restarts, the CLI."""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from telesnap.cli import build_parser
from telesnap.config import ConfigError
from telesnap.emulator.client import Press
from telesnap.sandbox.app import Sandbox
from telesnap.sandbox.cli import main as sandbox_main
from telesnap.sandbox.cli import options_from
from telesnap.sandbox.robots import read_board

from .helpers import ANN, BOB, GROUP_ID, Players, keyed_session, running_sandbox


async def sandbox_call(sandbox: Sandbox, method: str, path: str, **body: Any) -> tuple[int, Any]:
    async with (
        keyed_session(sandbox) as session,
        session.request(
            method, f"{sandbox.url.rstrip('/')}/_sandbox{path}", json=body or None
        ) as response,
    ):
        return response.status, await response.json()


@pytest.fixture
async def sandbox(tmp_path: Path) -> Any:
    async with running_sandbox(tmp_path) as running:
        yield running


@pytest.fixture
async def players(sandbox: Sandbox) -> Any:
    table = Players(sandbox)
    yield table
    await table.close()


async def test_skipping_ahead_fires_the_reminder_and_then_the_auto_flip(
    sandbox: Sandbox, players: Players
) -> None:
    board = await players.start_game(["Ann", "Bob"])
    away = read_board(board.text).turn
    status, overview = await sandbox_call(sandbox, "POST", "/clock/skip", seconds=300)
    assert status == 200
    assert overview["clock"]["skipped_seconds"] == 300
    reminder = await players.wait_for("it is your turn", after=board.message_id)
    assert f"{away}, it is your turn" in reminder.text
    await sandbox_call(sandbox, "POST", "/clock/skip", seconds=300)
    flipped = await players.wait_for("was away, so I flipped", after=reminder.message_id)
    assert f"{away} was away, so I flipped for them." in flipped.text


async def test_a_bad_skip_is_refused_and_moves_nothing(sandbox: Sandbox) -> None:
    for seconds in (-60, 0, 10**9):
        status, body = await sandbox_call(sandbox, "POST", "/clock/skip", seconds=seconds)
        assert status == 400
        assert "seconds" in body["error"]
    _, overview = await sandbox_call(sandbox, "GET", "/")
    assert overview["clock"]["skipped_seconds"] == 0


async def flip_until_a_match(players: Players) -> Any:
    board = await players.latest_board()
    for _ in range(200):
        reading = read_board(board.text)
        if reading.has_match:
            return board
        assert reading.turn is not None, "the game ended without a match"
        await players.press(reading.turn, board, "Flip")
        board = await players.latest_board(after=board.message_id)
    raise AssertionError("no match in 200 flips")


async def test_the_timeline_places_each_call_by_its_receipt_stamp(
    sandbox: Sandbox, players: Players
) -> None:
    sent = await players.command("Ann", "/settings tie_window 2000")
    await players.wait_for("Tie window: 2000 ms", after=sent)
    await players.start_game(["Ann", "Bob"])
    board = await flip_until_a_match(players)
    snap = next(b["callback_data"] for row in board.buttons for b in row if b["text"] == "Snap!")
    await players.client.press_many(
        [
            Press(GROUP_ID, board.message_id, ANN, data=snap),
            Press(GROUP_ID, board.message_id, BOB, data=snap, offset=0.05),
        ]
    )
    await players.wait_for("called together", after=board.message_id)
    status, races = await sandbox_call(sandbox, "GET", f"/races?chat_id={GROUP_ID}")
    assert status == 200
    race = races[-1]
    assert race["outcome"] == "tied"
    assert race["tie_window_ms"] == 2000
    assert sorted(race["winners"]) == ["Ann", "Bob"]
    first, second = race["calls"]
    assert (first["name"], first["offset_ms"], first["verdict"]) == ("Ann", 0.0, "tied")
    assert second["name"] == "Bob"
    assert second["verdict"] == "tied"
    assert 0 <= second["offset_ms"] < 2000  # one getUpdates batch may carry both: one stamp


async def test_a_won_race_names_its_winner_and_the_slower_caller(
    sandbox: Sandbox, players: Players
) -> None:
    sent = await players.command("Ann", "/settings tie_window 0")
    await players.wait_for("Tie window: 0 ms", after=sent)
    await players.start_game(["Ann", "Bob"])
    board = await flip_until_a_match(players)
    snap = next(b["callback_data"] for row in board.buttons for b in row if b["text"] == "Snap!")
    await players.client.press_many(
        [
            Press(GROUP_ID, board.message_id, BOB, data=snap),
            Press(GROUP_ID, board.message_id, ANN, data=snap, offset=0.05),
        ]
    )
    await players.latest_board(after=board.message_id)
    await players.client.wait_until_idle()
    _, races = await sandbox_call(sandbox, "GET", f"/races?chat_id={GROUP_ID}")
    race = races[-1]
    assert race["outcome"] == "won"
    assert race["winners"] == ["Bob"]
    assert [(c["name"], c["verdict"]) for c in race["calls"]] == [
        ("Bob", "won"),
        ("Ann", "too_slow"),
    ]


async def test_a_robot_joins_and_plays_like_a_person(sandbox: Sandbox, players: Players) -> None:
    status, robot = await sandbox_call(
        sandbox, "POST", "/robots", first_name="Robo", reaction_ms=40, jitter_ms=10, wrong_rate=0
    )
    assert status == 200
    robot_id = robot["user_id"]
    sent = await players.command("Ann", "/newgame")
    lobby = await players.wait_for("A game of Snap is starting", after=sent)
    joined = await players.client.wait_for_message(
        GROUP_ID, lambda m: m.message_id == lobby.message_id and "• Robo" in m.text
    )
    assert "• Ann" in joined.text
    await players.press("Ann", lobby, "Start")
    pressed = await players.client.wait_for_toast(
        lambda toast: toast.user_id == robot_id and toast.is_answered and "Start" not in str(toast)
    )
    assert pressed.chat_id == GROUP_ID
    updates = await players.client.updates()
    robot_presses = [
        u.payload["callback_query"]["from"]
        for u in updates
        if u.kind == "callback_query" and u.payload["callback_query"]["from"]["id"] == robot_id
    ]
    assert robot_presses
    assert all(person["is_bot"] is False for person in robot_presses)


async def test_a_robots_style_is_checked(sandbox: Sandbox) -> None:
    for style in ({"reaction_ms": 5}, {"jitter_ms": 500}, {"wrong_rate": 2}):
        status, body = await sandbox_call(sandbox, "POST", "/robots", **style)
        assert status == 400, style
        assert "error" in body
    _, overview = await sandbox_call(sandbox, "GET", "/")
    assert overview["robots"] == []
    assert len(sandbox.emulator.world.users) == 3  # the bot, Ann and Bob: nobody was added


async def test_a_new_person_is_in_every_group_and_has_a_private_chat(sandbox: Sandbox) -> None:
    status, person = await sandbox_call(
        sandbox, "POST", "/people", first_name="سارا", language_code="ar"
    )
    assert status == 200
    world = sandbox.emulator.world
    groups = [chat for chat in world.chats.values() if chat.type != "private"]
    assert groups
    assert all(chat.role_of(person["id"]) == "member" for chat in groups)
    assert world.chats[person["id"]].type == "private"
    assert world.users[person["id"]].language_code == "ar"


async def test_a_restarted_sandbox_keeps_its_people_games_and_clock(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path, roster=True) as first:
        table = Players(first)
        try:
            await sandbox_call(first, "POST", "/people", first_name="Cid")
            await sandbox_call(first, "POST", "/clock/skip", seconds=60)
            board = await table.start_game(["Ann", "Bob"])
        finally:
            await table.close()
        last_id = first.emulator.world.chat(GROUP_ID).last_message_id
    async with running_sandbox(tmp_path, roster=True) as second:
        world = second.emulator.world
        assert [u.first_name for u in world.users.values() if not u.is_bot] == ["Ann", "Bob", "Cid"]
        assert second.clock.skipped_seconds == 60
        table = Players(second)
        try:
            back = await table.wait_for("I am back: the game goes on.")
            assert back.message_id > last_id >= board.message_id
            again = await table.latest_board(after=back.message_id - 1)
            assert read_board(again.text).turn == read_board(board.text).turn
        finally:
            await table.close()


def fresh_args(database: Path) -> argparse.Namespace:
    return argparse.Namespace(
        database_url=f"sqlite:///{database}",
        fresh=True,
        host="127.0.0.1",
        port=8080,
        no_flood_limits=False,
    )


async def test_fresh_removes_the_database_and_the_chats_the_sandbox_made(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path, roster=True):
        pass
    database, saved = tmp_path / "sandbox.db", tmp_path / "sandbox.db.sandbox.json"
    assert database.exists()
    assert saved.exists()
    options = options_from(fresh_args(database))
    assert not database.exists()
    assert not saved.exists()
    assert options.database_url == f"sqlite+aiosqlite:///{database}"
    assert options.roster_file == saved
    assert options.flood_limits is True


async def test_fresh_refuses_a_database_the_sandbox_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "sandbox.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE real_games (id INTEGER)")
    async with running_sandbox(tmp_path, roster=True):  # a sandbox run on it does not make it one
        pass
    before = database.read_bytes()
    args = build_parser().parse_args(
        ["sandbox", "--fresh", "--database-url", f"sqlite:///{database}"]
    )
    assert sandbox_main(args) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "--fresh removes only a database the sandbox created" in error
    assert database.read_bytes() == before
    assert (tmp_path / "sandbox.db.sandbox.json").exists()


def test_fresh_refuses_a_database_with_no_sandbox_beside_it(tmp_path: Path) -> None:
    database = tmp_path / "telesnap.db"
    database.write_bytes(b"an operator's real games")
    with pytest.raises(ConfigError, match=r"telesnap\.db is not one .*nothing was removed"):
        options_from(fresh_args(database))
    assert database.read_bytes() == b"an operator's real games"


async def test_the_chats_are_saved_while_it_runs(tmp_path: Path) -> None:
    async with running_sandbox(tmp_path, roster=True) as sandbox:
        saved = tmp_path / "sandbox.db.sandbox.json"
        sandbox.add_person("Dee", "sw")
        assert await sandbox.saves.wait_until(
            lambda: saved.exists() and "Dee" in saved.read_text(encoding="utf-8"), 10.0
        )
        people = [user["first_name"] for user in json.loads(saved.read_text())["users"]]
        assert people == ["Ann", "Bob", "Dee"]


async def test_a_slow_phone_loses_a_race_it_pressed_at_the_same_moment(
    sandbox: Sandbox, players: Players
) -> None:
    async with keyed_session(sandbox) as session:
        url = f"{sandbox.url}_emulator/users/{ANN}/network"
        async with session.put(url, json={"delay_ms": 600, "jitter_ms": 0}) as response:
            assert response.status == 200
    await players.start_game(["Ann", "Bob"])
    board = await flip_until_a_match(players)
    snap = next(b["callback_data"] for row in board.buttons for b in row if b["text"] == "Snap!")
    await players.client.press_many(
        [
            Press(GROUP_ID, board.message_id, ANN, data=snap),
            Press(GROUP_ID, board.message_id, BOB, data=snap),
        ]
    )
    won = await players.wait_for("wins the Snap", after=board.message_id)
    assert "Bob" in won.text
    await players.client.wait_until_idle()
    _, races = await sandbox_call(sandbox, "GET", f"/races?chat_id={GROUP_ID}")
    calls = races[-1]["calls"]
    assert (calls[0]["name"], calls[0]["verdict"]) == ("Bob", "won")
    (ann,) = [c for c in calls if c["name"] == "Ann"]
    assert ann["verdict"] in {"too_slow", "too_late"}
    assert ann["offset_ms"] > races[-1]["tie_window_ms"]  # outside the window: no tie


async def test_the_races_of_an_unknown_chat_are_a_clear_refusal(sandbox: Sandbox) -> None:
    status, body = await sandbox_call(sandbox, "GET", "/races?chat_id=-999")
    assert status == 400
    assert body == {"error": "Bad Request: chat not found"}


def test_the_port_comes_from_the_command_line_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = f"sqlite:///{tmp_path / 'games.db'}"
    parsed = build_parser().parse_args(["sandbox", "--database-url", database])
    assert parsed.target == "telesnap.sandbox.cli:main"
    monkeypatch.delenv("TELESNAP_SANDBOX_PORT", raising=False)
    assert options_from(parsed).port == 8080
    monkeypatch.setenv("TELESNAP_SANDBOX_PORT", "9123")
    assert options_from(parsed).port == 9123
    with_port = build_parser().parse_args(["sandbox", "--port", "9000", "--database-url", database])
    assert options_from(with_port).port == 9000
    monkeypatch.setenv("TELESNAP_SANDBOX_PORT", "eighty")
    with pytest.raises(ConfigError, match="TELESNAP_SANDBOX_PORT must be a port number"):
        options_from(parsed)
    for out_of_range in ("0", "65536"):  # as --port: every port is 1-65535
        monkeypatch.setenv("TELESNAP_SANDBOX_PORT", out_of_range)
        with pytest.raises(ConfigError, match=f"from 1 to 65535, got '{out_of_range}'"):
            options_from(parsed)


async def test_an_unreadable_saved_chats_file_is_a_clear_error(tmp_path: Path) -> None:
    saved = tmp_path / "sandbox.db.sandbox.json"
    saved.write_text('{"version": 1, "users": [{"id": 1001}]}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot be read .*; --fresh starts over"):
        async with running_sandbox(tmp_path, roster=True):
            pass
    assert saved.read_text(encoding="utf-8") == '{"version": 1, "users": [{"id": 1001}]}'
    saved.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot be read"):
        async with running_sandbox(tmp_path, roster=True):
            pass
