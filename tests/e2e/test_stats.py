"""Stats commands through the emulator: /stats, /leaderboard, /history and /replay."""

from __future__ import annotations

import gettext
import io
from pathlib import Path

from PIL import Image
from sqlalchemy import select

from telesnap.bot.render.replay_film import film_frames
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator
from telesnap.services.stats.audit import check_game, stored_game
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models import Game
from telesnap.storage.uow import UnitOfWork

from .harness import database_file, table_with
from .stats_helpers import play_short_game, short_games_played, wait_for_kind

GAMES = 6


async def test_stats_leaderboard_history_and_replay(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Ann", "Bob"], admins=["Ann"]) as table:
        await table.command("Ann", "settings", "flip_limit 10")
        await table.wait_for_text("Saved.")
        await table.command("Ann", "settings", "shared_stats on")  # figures across chats
        await table.wait_for_text("Figures shared across chats: on")
        for _ in range(GAMES):
            await play_short_game(table, ["Ann", "Bob"], snapper="Bob")

        await table.command("Bob", "stats")
        photo = await wait_for_kind(table, "photo", "Stats of")
        assert photo.file_size
        assert photo.file_size > 1000
        bob_wins = await wins_of(url, table.players["Bob"])
        # Every game of Bob's was played here: one block says so, not two equal ones.
        assert f"This chat and all chats: {GAMES} games · {bob_wins} wins" in photo.text
        assert "All chats:" not in photo.text
        assert photo.text.count(f"{GAMES} games") == 1
        assert "Ratings start at 1000" in photo.text

        await table.command("Ann", "leaderboard")
        board = await table.wait_for_text("Leaderboard: Rating")
        assert "Listed after 5 rated games." in board.text
        assert "Provisional" not in board.text
        assert "Ratings start at 1000" in board.text
        assert places_of_two(board.text) in ({"1. Ann", "2. Bob"}, {"1. Bob", "2. Ann"})
        assert board.button_texts == [
            "• Rating •",
            "Wins",
            "Fastest",
            "Snaps",
            "• This chat •",
            "All chats",
        ]
        await table.press("Ann", board, "Wins")
        edited = await table.wait_for_text("Leaderboard: Wins")
        assert edited.message_id == board.message_id
        await table.press("Ann", edited, "All chats")
        await table.wait_for_text("all chats")

        await table.command("Ann", "history")
        history = await table.wait_for_text("Games played here")
        assert f"page 1 of 2 ({GAMES} games)" in history.text
        assert "#6 · " in history.text
        assert "#2 · " in history.text
        assert "#1 · " not in history.text
        assert "Ann, Bob" in history.text
        assert "10 flips" in history.text
        assert history.button_texts == ["Older »"]
        await table.press("Bob", history, "Older »")
        older = await table.wait_for_text("page 2 of 2")
        assert "#1 · " in older.text
        assert older.button_texts == ["« Newer"]
        await table.press("Bob", older, "« Newer")
        await table.wait_for_text("page 1 of 2")

        await table.command("Ann", "replay", "1")
        film = await wait_for_kind(table, "animation", "#1")
        assert film.file_name == "snap-game-1.gif"
        assert "/replay 1 file sends every move as a file." in film.text
        await assert_a_film_of_every_move(emulator, film, url, game_id=1)
        await table.command("Ann", "replay", "1 file")
        document = await wait_for_kind(table, "document", "#1")
        assert document.file_name == "snap-game-1.tsv"
        assert document.file_size
        assert document.file_size > 500
        await table.command("Ann", "replay", "99")
        await table.wait_for_text("No game #99 has ended in this chat.")
        await table.command("Ann", "replay", "1 gif")
        await table.wait_for_text("Write /replay ID to watch a game")
        named = await table.command("Bob", "stats", "Ann")
        assert (await table.reply_to(named)).text == "/stats takes no arguments."

    engine = create_engine(url)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            rows = list(await uow.session.scalars(select(Game).order_by(Game.id)))
            assert [row.status for row in rows] == ["finished"] * GAMES
            for row in rows:
                assert check_game(await stored_game(uow, row)) == []
            bob = await uow.stats.player_stats(table.chat_id, table.players["Bob"])
            assert bob is not None
            assert bob.games == GAMES
    finally:
        await engine.dispose()


async def assert_a_film_of_every_move(
    emulator: RunningEmulator, film: TranscriptMessage, url: str, game_id: int
) -> None:
    """The GIF Telegram got plays one frame per move a board described, and loops."""
    assert film.file is not None
    kept = emulator.emulator.files.get(film.file["file_id"])
    assert kept is not None
    picture = Image.open(io.BytesIO(kept.content))
    assert picture.format == "GIF"
    assert picture.info.get("loop") == 0
    assert picture.n_frames == await described_moves(url, game_id)


async def described_moves(url: str, game_id: int) -> int:
    """How many of the game's operations a board describes (all but correct calls)."""
    engine = create_engine(url)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            history = [record.operation for record in await uow.history.operations(game_id)]
    finally:
        await engine.dispose()
    return len(film_frames(history, ["A", "B"], gettext.NullTranslations()))


async def test_a_new_group_sees_a_provisional_leaderboard_after_its_first_game(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob"], admins=["Ann"]
    ) as table:
        await short_games_played(table, ["Ann", "Bob"], snapper="Bob")
        await table.command("Ann", "leaderboard")
        board = await table.wait_for_text("leaderboard: Rating")
        assert board.text.startswith("🏆 Provisional leaderboard: Rating · this chat")
        assert places_of_two(board.text) in ({"1. Ann", "2. Bob"}, {"1. Bob", "2. Ann"})
        assert "Provisional: nobody has 5 rated games yet." in board.text
        assert "Nobody is listed yet." not in board.text


async def wins_of(url: str, user_id: int) -> int:
    """Bob's wins, counted from the stored games' winners (not from the stats tables)."""
    engine = create_engine(url)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            winners = await uow.session.scalars(select(Game.winner_ids))
            return sum(user_id in (ids or []) for ids in winners)
    finally:
        await engine.dispose()


async def test_replay_of_an_id_no_database_holds_is_answered(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        huge = "99999999999999999999"
        await table.command("Ann", "replay", huge)
        await table.wait_for_text(f"No game #{huge} has ended in this chat.")
        await table.command("Ann", "replay", "²")  # a digit that is not a decimal one
        await table.wait_for_text("Write /replay ID to watch a game")


async def test_a_private_chat_sends_leaderboards_and_history_to_the_groups(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), ["Ann"]) as table:
        client, ann = table.client, table.players["Ann"]
        private = int((await client.create_chat("private", members=[ann]))["id"])
        for command in ("leaderboard", "history"):
            asked = await client.send_command(private, ann, command)
            reply = await client.wait_for_message(
                private, lambda m, asked=asked: m.reply_to_message_id == asked
            )
            assert reply.text == (
                f"🏆 Leaderboards and game history are kept per group: send /{command} in a"
                " group where you play. Here /stats shows your own figures."
            )


def places_of_two(board: str) -> set[str]:
    """The places of a board of two players, as "1. Ann"; two with equal figures share the
    first, which the set then gives as the other's (so ties and orders compare alike)."""
    lines = [line.split(" — ") for line in board.splitlines() if " — " in line]
    assert len(lines) == 2
    (first, shown_first), (second, shown_second) = lines
    if shown_first == shown_second:
        assert first.startswith("1. "), "equal figures share the first place"
        assert second.startswith("1. "), "equal figures share the first place"
        return {first, "2. " + second.removeprefix("1. ")}
    return {first, second}
