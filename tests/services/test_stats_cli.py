"""``telesnap replay`` and ``telesnap export`` on a database of games played via the services."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from telesnap.cli import main
from telesnap.services.stats.service import StatsService
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.migrate import upgrade_database
from telesnap.storage.uow import UnitsOfWork

from .stats_games import CHATS, Driver


async def fill(url: str, games: int) -> dict[int, str]:
    """Play games; return each ended game's /replay document by game id."""
    await upgrade_database(url)
    engine = create_engine(url)
    try:
        sessions = session_factory(engine)
        await Driver(sessions, random.Random(11)).play_games(games)
        service = StatsService(UnitsOfWork(sessions))
        documents = {}
        for place in CHATS:
            for page in range(5):
                for game in (await service.history(place.chat_id, page)).games:
                    documents[game.game_id] = (
                        await service.replay(place.chat_id, game.game_id)
                    ).text
        return documents
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[int, str]]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('cli') / 'cli.db'}"
    return url, asyncio.run(fill(url, 4))


def test_replay_checks_every_game_in_the_database(
    filled: tuple[str, dict[int, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, documents = filled
    for game_id in documents:
        assert main(["replay", "--game", str(game_id), "--database-url", url]) == 0
    assert "they match what is stored" in capsys.readouterr().out
    assert main(["replay", "--game", "999", "--database-url", url]) == 1


def test_replay_accepts_a_document_and_refuses_a_tampered_one(
    filled: tuple[str, dict[int, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, documents = filled
    text = documents[max(documents)]
    good = tmp_path / "good.tsv"
    good.write_text(text, encoding="utf-8")
    assert main(["replay", str(good)]) == 0
    last = text.rstrip("\n").splitlines()[-1]
    seq, kind, payload = last.split("\t")
    ended = json.loads(payload)
    ended["card_counts"] = [count + 1 for count in ended["card_counts"]]
    tampered = tmp_path / "tampered.tsv"
    tampered.write_text(text.replace(last, f"{seq}\t{kind}\t{json.dumps(ended)}"), "utf-8")
    capsys.readouterr()
    assert main(["replay", str(tampered)]) == 1
    assert capsys.readouterr().out.strip()
    missing_line = tmp_path / "missing.tsv"
    missing_line.write_text(text.replace(last + "\n", ""), encoding="utf-8")
    assert main(["replay", str(missing_line)]) == 1
    assert main(["replay", str(tmp_path / "absent.tsv")]) == 1


def test_replay_refuses_a_document_whose_race_card_count_was_edited(
    filled: tuple[str, dict[int, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The count is what /stats credits as cards won: an edited one must not pass."""
    _, documents = filled
    text = next(text for text in documents.values() if "\trace_resolved\t" in text)
    race = next(line for line in text.splitlines() if "\trace_resolved\t" in line)
    seq, kind, payload = race.split("\t")
    edited = json.loads(payload)
    edited["cards"] += 1
    tampered = tmp_path / "cards.tsv"
    tampered.write_text(text.replace(race, f"{seq}\t{kind}\t{json.dumps(edited)}"), "utf-8")
    assert main(["replay", str(tampered)]) == 1
    out = capsys.readouterr().out
    assert "they match what is stored" not in out
    assert f"moved {edited['cards'] - 1} cards, not {edited['cards']}" in out


def test_export_prints_the_chats_games_and_figures(
    filled: tuple[str, dict[int, str]], tmp_path: Path
) -> None:
    url, documents = filled
    chat = CHATS[0].chat_id
    output = tmp_path / "export.json"
    assert (
        main(["export", "--chat", str(chat), "--database-url", url, "--output", str(output)]) == 0
    )
    data = json.loads(output.read_text(encoding="utf-8"))
    assert output.stat().st_mode & 0o777 == 0o600, "an export holds names: its owner's only"
    assert data["chat_id"] == chat
    exported = {game["game_id"] for game in data["games"]}
    assert exported
    assert exported <= set(documents)
    for player in data["players"]:
        # An unrated game is a game for those who walked away, not for the one who stayed.
        assert player["chat"]["games"] == sum(
            any(
                p["user_id"] == player["user_id"] and (game["rated"] or p["walked_away"])
                for p in game["players"]
            )
            for game in data["games"]
            if game["end_reason"] != "abandoned"
        )


def test_an_export_to_a_missing_folder_is_one_line_naming_it(
    filled: tuple[str, dict[int, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = filled
    output = tmp_path / "missing" / "export.json"
    chat = str(CHATS[0].chat_id)
    assert main(["export", "--chat", chat, "--database-url", url, "--output", str(output)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("telesnap: ")
    assert str(output) in line
    assert not output.parent.exists()


def test_an_export_to_a_dash_is_printed_as_the_usual_unix_tools_do(
    filled: tuple[str, dict[int, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = filled
    monkeypatch.chdir(tmp_path)
    chat = CHATS[0].chat_id
    assert main(["export", "--chat", str(chat), "--database-url", url, "--output", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["chat_id"] == chat
    assert not (tmp_path / "-").exists(), "no file named '-'"
