"""Stats commands through the emulator: /stats, /leaderboard, /history and /replay."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from telesnap.emulator.testing import RunningEmulator
from telesnap.services.stats_audit import check_game, stored_game
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models import Game
from telesnap.storage.uow import UnitOfWork

from .harness import database_file, table_with
from .stats_helpers import play_short_game, wait_for_kind

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
        assert f"This chat: {GAMES} games · {bob_wins} wins" in photo.text
        assert f"All chats: {GAMES} games · {bob_wins} wins" in photo.text

        await table.command("Ann", "leaderboard")
        board = await table.wait_for_text("Leaderboard: Rating")
        assert "Listed after 5 rated games." in board.text
        listed = {line.split(" — ")[0] for line in board.text.splitlines() if " — " in line}
        assert listed in ({"1. Ann", "2. Bob"}, {"1. Bob", "2. Ann"})
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
        document = await wait_for_kind(table, "document", "#1")
        assert document.file_name == "snap-game-1.tsv"
        assert document.file_size
        assert document.file_size > 500
        await table.command("Ann", "replay", "99")
        await table.wait_for_text("No game #99 has ended in this chat.")

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


async def wins_of(url: str, user_id: int) -> int:
    """Bob's wins, counted from the stored games' winners (not from the stats tables)."""
    engine = create_engine(url)
    try:
        async with UnitOfWork(session_factory(engine)) as uow:
            winners = await uow.session.scalars(select(Game.winner_ids))
            return sum(user_id in (ids or []) for ids in winners)
    finally:
        await engine.dispose()
