"""Helpers for the stats end-to-end tests: short games, and finding the bot's replies."""

from __future__ import annotations

from collections.abc import Sequence

from telesnap.emulator.records import TranscriptMessage

from .harness import Table


async def play_short_game(table: Table, names: Sequence[str], snapper: str) -> TranscriptMessage:
    """Open, start and play a game to its end (the chat's flip limit); return the last board."""
    board = await table.open_and_start(names)
    for _ in range(200):
        if board.turn is None:
            return board.message
        if board.has_match:
            await table.press(snapper, board.message, "Snap!")
        else:
            await table.press(board.turn, board.message, "Flip")
        board = await table.next_board()
    raise AssertionError("the game did not end")


async def short_games_played(
    table: Table, names: Sequence[str], snapper: str, games: int = 1
) -> TranscriptMessage:
    """The first of ``names`` (an admin) sets a flip limit of 10, then ``games`` are played."""
    await table.command(names[0], "settings", "flip_limit 10")
    await table.wait_for_text("Saved.")
    for _ in range(games):
        last = await play_short_game(table, names, snapper)
    return last


async def wait_for_kind(
    table: Table, kind: str, fragment: str, after: int = 0, limit_s: float = 10.0
) -> TranscriptMessage:
    """The first bot message of ``kind`` (text, photo, document) after message ``after``."""
    return await table.client.wait_for_message(
        table.chat_id,
        lambda m: m.kind == kind and fragment in m.text and m.message_id > after,
        timeout=limit_s,
    )
